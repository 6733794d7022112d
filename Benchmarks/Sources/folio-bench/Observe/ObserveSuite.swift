import Foundation

/// The `observe` suite: Dflat's three change-subscription cases ("Change Subscription" in
/// Dflat's benchmark document), for every system of ``ObserveSystems/all``. At the default
/// n = 10,000 there are 1,000 subscribers (n / 10) and one transaction updating all n
/// records:
///
/// - `subscribe-1000-objects-update-10000`: 1,000 fetched results (live queries), each over
///   exactly one record by primary key; the transaction changes every record's title and
///   tag.
/// - `observe-1000-objects-update-10000`: 1,000 object subscriptions (Folio `observe(id)`),
///   same transaction.
/// - `subscribe-1000-ranges-rotate-10000`: 1,000 fetched results over ranges of the indexed
///   `priority`, each holding 1,000 records; the transaction also moves every record's
///   priority by n / 2 (mod n), so every result set is replaced by 1,000 other records.
///
/// Per run (untimed set-up): a fresh copy of a store holding the n records is opened, every
/// subscriber subscribes in a task of its own and checks its initial value (exactly the
/// expected records), and the system settles. Timed: from just before the update
/// transaction is called until the last subscriber has received its updated value. Then
/// (untimed) every delivered value is checked record by record against the expected one; a
/// wrong or missing delivery voids the run. The rows' notes also give, as medians over the
/// runs, when the update transaction returned and how long after that the last delivery
/// came.
enum ObserveSuite {
    static let name = "observe"
    static let workloadNames = [
        "subscribe-1000-objects-update-10000", "observe-1000-objects-update-10000",
        "subscribe-1000-ranges-rotate-10000",
        // Cases 1 and 3 again, each subscription written as a predicate
        // (Folio's liveQuery(where:); GRDB's observation is a query already).
        "subscribe-1000-objects-update-10000-predicate", "subscribe-1000-ranges-rotate-10000-predicate",
    ]
    /// A run that has not delivered by then fails (a hung observation, not a slow one).
    static let timeout: Duration = .seconds(300)

    static func run(_ context: BenchContext) async throws {
        let data = ObserveData(n: context.sizes.crudN)
        let fixtures = CrudFixtures(context: context)
        defer { fixtures.release(n: data.n) }
        for system in ObserveSystems.all {
            let workloads = ObserveWorkloads(context: context, fixtures: fixtures, system: system, data: data)
            try await context.measure(workloads.resultsByID())
            try await context.measure(workloads.objects())
            try await context.measure(workloads.ranges())
            try await context.measure(workloads.resultsByID(predicate: true))
            try await context.measure(workloads.ranges(predicate: true))
        }
    }
}

/// The records, subscriptions and expected answers of the observe suite at size n.
final class ObserveData: Sendable {
    /// The tag every updated record carries (what tells a subscriber its value is new).
    static let updatedTag = "tag-updated"

    let n: Int
    /// Subscriptions per workload: n / 10.
    let subscribers: Int
    /// Records per range in case 3: n / 10.
    let width: Int
    /// The records before the update: ids 1...n, priorities a random permutation of 0..<n
    /// (so every range of width w holds exactly w records).
    let dataset: CrudDataset
    /// Cases 1 and 2: every record with its title and tag changed.
    let updated: [CrudRecord]
    /// Case 3: as ``updated``, and priority moved by n / 2 (mod n).
    let rotated: [CrudRecord]
    /// Cases 1 and 2: the ids subscribed, spread evenly over 1...n.
    let subscribedIDs: [Int64]
    /// Case 3: the ranges subscribed, spread evenly over 0..<n.
    let windows: [Range<Int>]
    /// Case 3: the ids each range holds before and after the update, in priority order.
    let initialWindowIDs: [[Int64]]
    let rotatedWindowIDs: [[Int64]]

    init(n: Int) {
        self.n = n
        subscribers = max(1, n / 10)
        width = max(1, n / 10)
        let permutation = shuffledIndices(n, seed: 23)
        let records = (1...max(1, n)).map { id -> CrudRecord in
            var record = CrudRecord.make(id: Int64(id), priorityDomain: n)
            record.priority = permutation[id - 1]
            return record
        }
        dataset = CrudDataset(n: n, label: "observe", records: records)
        updated = records.map { record in
            var record = record
            record.title = "updated-\(record.id)"
            record.tag = Self.updatedTag
            return record
        }
        rotated = updated.map { record in
            var record = record
            record.priority = (record.priority + n / 2) % n
            return record
        }
        let subscribers = subscribers, width = width
        subscribedIDs = (1...subscribers).map { Int64($0 * n / subscribers) }
        windows = (0..<subscribers).map { q in
            let start = subscribers == 1 ? 0 : q * (n - width) / (subscribers - 1)
            return start..<(start + width)
        }
        func idsByPriority(_ records: [CrudRecord]) -> [Int64] {
            var ids = [Int64](repeating: 0, count: n)
            for record in records { ids[record.priority] = record.id }
            return ids
        }
        let before = idsByPriority(records), after = idsByPriority(rotated)
        initialWindowIDs = windows.map { Array(before[$0]) }
        rotatedWindowIDs = windows.map { Array(after[$0]) }
    }

    /// Whether `results` are exactly the records `ids` of `records` (ids 1...n), in order.
    static func matches(_ results: [CrudRecord], _ ids: [Int64], in records: [CrudRecord]) -> Bool {
        results.count == ids.count && zip(results, ids).allSatisfy { $0.id == $1 && $0 == records[Int($1) - 1] }
    }
}

/// One subscriber's updated value and when it arrived.
struct Arrival<Value: Sendable>: Sendable {
    var index: Int
    /// `DispatchTime` uptime nanoseconds at delivery.
    var nanoseconds: UInt64
    var value: Value
    /// Values delivered between the initial and the updated one that still held the old
    /// records (a system may repeat its initial value): skipped, counted.
    var repeats: Int
}

/// The observe suite's workloads for one system.
struct ObserveWorkloads {
    let context: BenchContext
    let fixtures: CrudFixtures
    let system: any ObserveSystem.Type
    let data: ObserveData

    /// Case 1: live queries of one record each, by primary key (`predicate`: written as one).
    func resultsByID(predicate: Bool = false) -> Workload {
        let data = data
        return subscriptionWorkload(
            ObserveSuite.workloadNames[predicate ? 3 : 0], update: data.updated,
            what:
                "\(Format.grouped(data.subscribers)) fetched results (live queries), each exactly one record by primary key\(predicate ? " written as a predicate (id == x)" : ""); one transaction changes the title and tag of all \(Format.grouped(data.n)) records",
            watch: { store, index, done in
                if predicate {
                    try await store.watchResults(matchingID: data.subscribedIDs[index], until: done)
                } else {
                    try await store.watchResults(id: data.subscribedIDs[index], until: done)
                }
            },
            isUpdate: { (results: [CrudRecord]) in results.first?.tag == ObserveData.updatedTag },
            isInitial: { index, results in results == [data.dataset.records[Int(data.subscribedIDs[index]) - 1]] },
            isExpectedUpdate: { index, results in results == [data.updated[Int(data.subscribedIDs[index]) - 1]] })
    }

    /// Case 2: object subscriptions.
    func objects() -> Workload {
        let data = data
        return subscriptionWorkload(
            ObserveSuite.workloadNames[1], update: data.updated,
            what:
                "\(Format.grouped(data.subscribers)) object subscriptions, one record each; one transaction changes the title and tag of all \(Format.grouped(data.n)) records",
            watch: { store, index, done in try await store.watchObject(id: data.subscribedIDs[index], until: done) },
            isUpdate: { (record: CrudRecord?) in record?.tag == ObserveData.updatedTag },
            isInitial: { index, record in record == data.dataset.records[Int(data.subscribedIDs[index]) - 1] },
            isExpectedUpdate: { index, record in record == data.updated[Int(data.subscribedIDs[index]) - 1] })
    }

    /// Case 3: live range queries over the index, every result set rotated (`predicate`:
    /// each written as a predicate sorted by priority).
    func ranges(predicate: Bool = false) -> Workload {
        let data = data
        return subscriptionWorkload(
            ObserveSuite.workloadNames[predicate ? 4 : 2], update: data.rotated,
            what:
                "\(Format.grouped(data.subscribers)) fetched results over priority ranges of \(Format.grouped(data.width)) records (through the index)\(predicate ? " written as a predicate (lo..<hi contains priority, sorted by priority)" : ""); one transaction changes all \(Format.grouped(data.n)) records' title and tag and moves each priority by n/2 (mod n): every result set is replaced by \(Format.grouped(data.width)) other records",
            watch: { store, index, done in
                if predicate {
                    try await store.watchResults(priorityMatching: data.windows[index], until: done)
                } else {
                    try await store.watchResults(priorityIn: data.windows[index], until: done)
                }
            },
            isUpdate: { (results: [CrudRecord]) in results.first?.tag == ObserveData.updatedTag },
            isInitial: { index, results in
                ObserveData.matches(results, data.initialWindowIDs[index], in: data.dataset.records)
            },
            isExpectedUpdate: { index, results in
                ObserveData.matches(results, data.rotatedWindowIDs[index], in: data.rotated)
            })
    }

    private func subscriptionWorkload<Value: Sendable>(
        _ name: String, update: [CrudRecord], what: String,
        watch: @escaping @Sendable (any ObserveSystem, Int, (Value) throws -> Bool) async throws -> Void,
        isUpdate: @escaping @Sendable (Value) -> Bool,
        isInitial: @escaping @Sendable (Int, Value) -> Bool,
        isExpectedUpdate: @escaping @Sendable (Int, Value) -> Bool
    ) -> Workload {
        let system = system, fixtures = fixtures, data = data, scratch = context.scratch,
            durability = context.durability
        let subscribers = data.subscribers
        var notes = [
            what,
            "timed: from just before the update transaction is called until the last of the \(Format.grouped(subscribers)) subscribers has received its updated value; ops = deliveries",
            "each subscriber is a task iterating its subscription; its initial value is checked before timing (warm-up), its updated value after timing against the exact expected records",
            system.observationNote,
        ]
        if durability == .grouped {
            notes.append(
                "grouped durability: deliveries follow the group's flush (Folio: 10 ms window; GRDB: synchronous = NORMAL, no wait)"
            )
        }
        return Workload(
            suite: ObserveSuite.name, name: name, system: system.systemName, n: data.n,
            durability: .flag(durability), operations: subscribers, notes: notes
        ) { run in
            let path = try scratch.copy(
                try await fixtures.directory(system, data.dataset), label: "\(system.systemName)-observe")
            defer { scratch.remove(path) }
            let store = try await system.open(directory: path, durability: durability)
            let outcome: (arrivals: [Arrival<Value>], commitReturned: UInt64)
            do {
                outcome = try await Self.subscribeAndUpdate(
                    store: store, run: run, subscribers: subscribers, update: update,
                    watch: watch, isUpdate: isUpdate, isInitial: isInitial)
            } catch {
                try? await store.close()
                throw error
            }
            try await store.close()
            try expect(
                outcome.arrivals.count == subscribers,
                "\(name): \(outcome.arrivals.count) of \(subscribers) subscribers received the update")
            for arrival in outcome.arrivals {
                try expect(
                    isExpectedUpdate(arrival.index, arrival.value),
                    "\(name) [\(system.systemName)]: subscriber \(arrival.index) received a value that is not the updated one"
                )
            }
            let last = outcome.arrivals.map(\.nanoseconds).max() ?? outcome.commitReturned
            run.recordPart(
                "update transaction returned after",
                seconds: Double(outcome.commitReturned - run.startNanoseconds) / 1e9)
            // Negative when every delivery came before the update call returned (GRDB).
            run.recordPart(
                "last delivery after the update returned (negative: before)",
                seconds: Double(Int64(bitPattern: last &- outcome.commitReturned)) / 1e9)
            let repeats = outcome.arrivals.reduce(0) { $0 + $1.repeats }
            if repeats > 0 {
                run.notes.append("last run: \(repeats) repeated old values delivered before the updated ones (skipped)")
            }
            Sink.consume(outcome.arrivals.count &+ repeats)
        }
    }

    /// Subscribes `subscribers` tasks, waits for their initial values, then times the
    /// update and the deliveries (see ``ObserveSuite``).
    private static func subscribeAndUpdate<Value: Sendable>(
        store: any ObserveSystem, run: RunContext, subscribers: Int, update: [CrudRecord],
        watch: @escaping @Sendable (any ObserveSystem, Int, (Value) throws -> Bool) async throws -> Void,
        isUpdate: @escaping @Sendable (Value) -> Bool,
        isInitial: @escaping @Sendable (Int, Value) -> Bool
    ) async throws -> (arrivals: [Arrival<Value>], commitReturned: UInt64) {
        let ready = Countdown(subscribers)
        return try await withThrowingTaskGroup(of: Arrival<Value>?.self) { group in
            for index in 0..<subscribers {
                group.addTask {
                    var initial = true
                    var repeats = 0
                    var arrival: Arrival<Value>?
                    do {
                        try await watch(store, index) { value in
                            if initial {
                                guard isInitial(index, value) else {
                                    throw BenchError.wrongResult(
                                        "subscriber \(index): the initial value is not the expected records")
                                }
                                initial = false
                                ready.arrive()
                                return false
                            }
                            guard isUpdate(value) else {
                                repeats += 1
                                return false
                            }
                            arrival = Arrival(
                                index: index, nanoseconds: DispatchTime.now().uptimeNanoseconds, value: value,
                                repeats: repeats)
                            return true
                        }
                    } catch {
                        ready.fail(error)
                        throw error
                    }
                    return arrival
                }
            }
            group.addTask {
                try await Task.sleep(for: ObserveSuite.timeout)
                let error = BenchError.harness("observe: subscribers still waiting after \(ObserveSuite.timeout)")
                ready.fail(error)
                throw error
            }
            try await ready.wait()
            try await store.settle()

            var arrivals: [Arrival<Value>] = []
            arrivals.reserveCapacity(subscribers)
            var commitReturned: UInt64 = 0
            try await run.measure {
                try await store.updateAll(update)
                commitReturned = DispatchTime.now().uptimeNanoseconds
                while arrivals.count < subscribers, let next = try await group.next() {
                    if let arrival = next { arrivals.append(arrival) }
                }
            }
            group.cancelAll()
            return (arrivals, commitReturned)
        }
    }
}
