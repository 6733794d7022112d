import Foundation

/// The `mp` suite (issue 28): several processes writing one store, each a
/// `folio-bench __child` of its own, for each system of ``CrudSystems/all``. The store is
/// the crud suite's fixture (n records, default 10,000), copied fresh for every run; each
/// workload's Folio and GRDB runs are interleaved (folio, grdb, folio, grdb...), so both see
/// the same machine.
enum MultiProcessSuite {
    static let name = "mp"

    /// The process counts of `mp-update-individual`.
    static let processCounts = [2, 4]

    static func updateWorkloadName(processes: Int) -> String { "mp-update-individual-p\(processes)" }
    static let firstWriteWorkloadName = "mp-first-write-beside-idle"

    /// The suite's workload names, in report order.
    static let workloadNames = processCounts.map { updateWorkloadName(processes: $0) } + [firstWriteWorkloadName]

    static func run(_ context: BenchContext) async throws {
        let n = context.sizes.crudN
        let dataset = context.datasets.dataset(n)
        let fixtures = CrudFixtures(context: context)
        defer { fixtures.release(n: n) }
        var systems: [MultiProcessWorkloads] = []
        for entry in CrudSystems.all {
            guard let system = entry.type else {
                context.unavailableCrudSystem(entry.name, suite: Self.name, names: workloadNames, n: n)
                continue
            }
            systems.append(MultiProcessWorkloads(context: context, fixtures: fixtures, system: system))
        }
        for processes in processCounts {
            try await context.measureInterleaved(systems.map { $0.updateIndividual(dataset, processes: processes) })
        }
        try await context.measureInterleaved(systems.map { $0.firstWriteBesideIdle(dataset) })
        context.datasets.release(n)
    }
}

/// What a child of the `mp` suite measured of itself, one JSON line on its standard output.
/// Instants are ``MonotonicClock`` nanoseconds, comparable with the parent's.
struct MultiProcessReport: Codable, Sendable {
    /// Opening the store (before the start barrier: never part of a timed figure).
    var openSeconds: Double
    /// Just before its first write was called.
    var startNanoseconds: UInt64
    /// Just after its last write returned (durable).
    var endNanoseconds: UInt64
    /// Writes made (each returned).
    var operations: Int
    /// The child's peak resident memory over its whole life (`VmHWM`).
    var peakRSSBytes: Int
    /// `mp-idle`: whether it read the record the other process wrote, and how many reads it
    /// took (it reads again every 0.5 ms, for 5 s at most); its first read starts at
    /// ``startNanoseconds``, the one that saw the record ended at ``endNanoseconds``.
    var probeSeen: Bool?
    var probeReads: Int?
    /// `mp-update`: the longest of its updates, from the call to its return (a wait for
    /// another process's lock included).
    var longestUpdateSeconds: Double?

    var ownSeconds: Double { MonotonicClock.seconds(from: startNanoseconds, to: endNanoseconds) }
}

/// The `mp` workloads of one system.
struct MultiProcessWorkloads {
    let context: BenchContext
    let fixtures: CrudFixtures
    let system: any CrudSystem.Type

    private var durability: BenchDurability { context.durability }
    private var scratch: Scratch { context.scratch }

    /// The children's `--busy-timeout` arguments (none: the default).
    private var busyTimeoutArguments: [String] {
        context.busyTimeout.map { ["--busy-timeout", String($0)] } ?? []
    }

    /// How each process opens the store and how long its writes wait for another's lock.
    private var openingNote: String {
        let seconds = context.busyTimeout.map { Format.seconds($0) }
        if system is GRDBCrudSystem.Type {
            return
                "one DatabasePool per process, WAL, synchronous read back, busyMode .timeout(\(seconds ?? "5 s, Folio's default"))"
        }
        return
            "Persistence(at:) per process, busyTimeout \(seconds.map { "\($0) (--busy-timeout)" } ?? "5 s (the default)")"
    }

    /// Record `id` as the `mp` workloads write it: its title names the workload (`label`),
    /// its tag changed, the rest as in the fixture.
    static func updated(id: Int64, n: Int, label: String) -> CrudRecord {
        var record = CrudRecord.make(id: id, priorityDomain: n)
        record.title = "mp-\(label)-\(id)"
        record.tag = "tag-mp"
        return record
    }

    /// Process `writer`'s ids: `count` of them from `writer · count + 1` on.
    static func ids(writer: Int, count: Int) -> ClosedRange<Int64> {
        Int64(writer * count + 1)...Int64((writer + 1) * count)
    }

    /// P processes, each making k durable single-record updates (``Sizes/multiProcessUpdates``,
    /// 2,500 by default) of records of its own id range, in a random order, one transaction
    /// each, on one store: a fresh copy of the fixture each run. Timed from releasing all of
    /// them at once (each has opened the store and said `ready`) until the last one's last
    /// commit returned. Every record is read back afterwards; a lost update voids the run.
    func updateIndividual(_ dataset: CrudDataset, processes: Int) -> Workload {
        let system = system, scratch = scratch, durability = durability, fixtures = fixtures
        let updates = context.sizes.multiProcessUpdates
        let name = MultiProcessSuite.updateWorkloadName(processes: processes)
        let label = "p\(processes)"
        let busy = openingNote, busyTimeoutArguments = busyTimeoutArguments
        return Workload(
            suite: MultiProcessSuite.name, name: name, system: system.systemName, n: dataset.n,
            durability: .flag(durability), operations: processes * updates,
            notes: [
                "\(processes) processes (folio-bench __child mp-update) x \(Format.grouped(updates)) updates of records of their own id range, random order, one durable transaction each, on one store of n records (\(busy)); each opened the store before the start; timed from releasing all at once to the last one's last commit (CLOCK_MONOTONIC in parent and children); every record read back after (a lost update voids the run); peak RSS: the largest child's"
            ]
        ) { run in
            guard processes * updates <= dataset.n else {
                throw BenchError.harness(
                    "\(name): \(processes) x \(updates) updates need a store of at least that many records")
            }
            let path = try scratch.copy(
                try await fixtures.directory(system, dataset), label: "\(system.systemName)-mp-p\(processes)")
            defer { scratch.remove(path) }
            let arguments = (0..<processes).map { writer -> [String] in
                let ids = Self.ids(writer: writer, count: updates)
                return [
                    "mp-update", "--system", system.systemName, "--dir", path, "--n", String(dataset.n),
                    "--first", String(ids.lowerBound), "--count", String(updates), "--label", label,
                    "--durability", durability.rawValue,
                ] + busyTimeoutArguments
            }
            let (release, reports) = try await Self.runChildren(
                arguments, barrier: true, timeLimit: 120 + 0.05 * Double(processes * updates))
            for (writer, report) in reports.enumerated() {
                try expect(
                    report.operations == updates,
                    "\(name): process \(writer) reports \(report.operations) updates, not \(updates)")
            }
            let last = reports.map(\.endNanoseconds).max()!
            let seconds = MonotonicClock.seconds(from: release, to: last)
            try expect(seconds > 0, "\(name): the last commit came before the release")
            run.recordChild(
                ChildReport(seconds: seconds, peakRSSBytes: reports.map(\.peakRSSBytes).max()!, checksum: 0))
            run.recordPart(
                "first process done, from the release",
                seconds: MonotonicClock.seconds(from: release, to: reports.map(\.endNanoseconds).min()!))
            run.recordPart(
                "latest first update, from the release",
                seconds: MonotonicClock.seconds(from: release, to: reports.map(\.startNanoseconds).max()!))
            run.recordPart(
                "longest own span of a process (first update to last commit)", seconds: reports.map(\.ownSeconds).max()!
            )
            run.recordPart(
                "longest single update of any process (its wait for another's lock included)",
                seconds: reports.compactMap(\.longestUpdateSeconds).max() ?? 0)

            // Read back in the parent, the children gone: every process's update of every
            // record of its range, and every other record as the fixture had it.
            let store = try await system.open(directory: path, durability: durability)
            var lost = Array(repeating: 0, count: processes), wrong = 0, missing = 0, touched = 0
            for writer in 0..<processes {
                for id in Self.ids(writer: writer, count: updates) {
                    let found = try await store.fetch(id: id)
                    if found == Self.updated(id: id, n: dataset.n, label: label) { continue }
                    if found == nil {
                        missing += 1
                    } else if found == dataset.records[Int(id) - 1] {
                        lost[writer] += 1
                    } else {
                        wrong += 1
                    }
                }
            }
            for id in Int64(processes * updates + 1)..<Int64(dataset.n + 1) {
                if try await store.fetch(id: id) != dataset.records[Int(id) - 1] { touched += 1 }
            }
            try await store.close()
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
            try expect(
                lost.allSatisfy { $0 == 0 } && wrong == 0 && missing == 0 && touched == 0,
                "\(name) [\(system.systemName)]: updates lost per process \(lost) (of \(updates) each), records wrong \(wrong), missing \(missing), records outside the ranges changed \(touched)"
            )
        }
    }

    /// One durable write by a process that has just opened the store while another process
    /// has it open and idle (opened, said `ready`, waiting), timed in the writing child from
    /// the call to its return; in the same run, the same write (same record, same bytes) by a
    /// process alone with the store, each on a fresh copy of the fixture. The idle process,
    /// released after the write, must then read the written record.
    func firstWriteBesideIdle(_ dataset: CrudDataset) -> Workload {
        let system = system, scratch = scratch, durability = durability, fixtures = fixtures
        let busyTimeoutArguments = busyTimeoutArguments, opening = openingNote
        let name = MultiProcessSuite.firstWriteWorkloadName
        let id = Int64(dataset.n / 2 + 1)
        let label = "first-write"
        let expected = Self.updated(id: id, n: dataset.n, label: label)
        let aloneName = "alone: the same write with no other process open (same run, before)"
        return Workload(
            suite: MultiProcessSuite.name, name: name, system: system.systemName, n: dataset.n,
            durability: .flag(durability), operations: 1,
            notes: [
                "a child (__child mp-idle) opens the store and waits; a second child (__child mp-first-write) opens it and makes ONE durable single-record update, timed in that child from the call to its return (opening untimed, its median below); the idle one then must read the record; fresh copy of the fixture each; \(opening)"
            ]
        ) { run in
            let fixture = try await fixtures.directory(system, dataset)
            let writerArguments = { (path: String) -> [String] in
                [
                    "mp-first-write", "--system", system.systemName, "--dir", path, "--n", String(dataset.n),
                    "--first", String(id), "--count", "1", "--label", label, "--durability", durability.rawValue,
                ] + busyTimeoutArguments
            }
            func check(_ path: String, _ what: String) async throws {
                let store = try await system.open(directory: path, durability: durability)
                let found = try await store.fetch(id: id)
                try await store.close()
                try expect(found == expected, "\(name) [\(system.systemName)]: the write \(what) is not in the store")
            }

            // Alone.
            let alonePath = try scratch.copy(fixture, label: "\(system.systemName)-mp-first-alone")
            defer { scratch.remove(alonePath) }
            let alone = try await Self.runChildren([writerArguments(alonePath)], barrier: false, timeLimit: 120)
                .reports[0]
            try await check(alonePath, "alone")

            // Beside an idle process.
            let path = try scratch.copy(fixture, label: "\(system.systemName)-mp-first-beside")
            defer { scratch.remove(path) }
            let idle = try LineChild.launch(
                [
                    "mp-idle", "--system", system.systemName, "--dir", path, "--n", String(dataset.n),
                    "--first", String(id), "--count", "1", "--label", label, "--durability", durability.rawValue,
                ] + busyTimeoutArguments)
            let watchdog = Watchdog(seconds: 240) { idle.kill() }
            defer { watchdog.cancel() }
            let ready = await idle.nextLine()
            guard ready == "ready" else {
                idle.kill()
                let outcome = await idle.finish()
                throw BenchError.harness(
                    "\(name): the idle process said \(ready.map { "'\($0)'" } ?? "nothing") instead of ready (exit status \(outcome.status)): \(outcome.errors)"
                )
            }
            let beside: MultiProcessReport
            do {
                beside = try await Self.runChildren([writerArguments(path)], barrier: false, timeLimit: 120).reports[0]
            } catch {
                idle.kill()
                _ = await idle.finish()
                throw error
            }
            idle.send("go")
            let probeLine = await idle.nextLine()
            let outcome = await idle.finish()
            guard outcome.status == 0, let probeLine,
                let probe = try? JSONDecoder().decode(MultiProcessReport.self, from: Data(probeLine.utf8))
            else {
                throw BenchError.harness(
                    "\(name): the idle process failed (exit status \(outcome.status)\(watchdog.fired ? ", killed after 240 s" : "")): \(outcome.errors)"
                )
            }
            try expect(
                probe.probeSeen == true,
                "\(name) [\(system.systemName)]: the idle process never read the other process's write (\(probe.probeReads ?? 0) reads over 5 s)"
            )
            try await check(path, "beside the idle process")

            try expect(alone.operations == 1 && beside.operations == 1, "\(name): a writer made no write")
            run.recordChild(ChildReport(seconds: beside.ownSeconds, peakRSSBytes: beside.peakRSSBytes, checksum: 0))
            run.recordPart(aloneName, seconds: alone.ownSeconds)
            run.recordPart("open beside the idle process (untimed)", seconds: beside.openSeconds)
            run.recordPart("open alone (untimed)", seconds: alone.openSeconds)
            run.recordPart("idle process's open (untimed)", seconds: probe.openSeconds)
            // How soon the idle process saw the write: it is released once the writing child
            // has exited, and reads until it sees the record.
            run.recordPart(
                "idle process's first read, after the write returned",
                seconds: MonotonicClock.seconds(from: beside.endNanoseconds, to: probe.startNanoseconds))
            run.recordPart(
                "idle process saw the write, after it returned",
                seconds: MonotonicClock.seconds(from: beside.endNanoseconds, to: probe.endNanoseconds))
            if let reads = probe.probeReads, reads > 1 {
                run.notes.append(
                    "last run: the idle process read the record as it was before the write \(reads - 1) times (every 0.5 ms) before it saw the write"
                )
            }
        }
    }

    /// Runs one child per element of `arguments` (`folio-bench __child ...`) and returns each
    /// one's report, in order. With `barrier`, every child opens its store and says `ready`
    /// first; then all are released at once (a line on each one's standard input), and
    /// `release` is the instant just before. Children that are not done within `timeLimit`
    /// seconds are killed. Throws, with every failing child's standard error, if any child
    /// fails; it waits for all of them first.
    static func runChildren(
        _ arguments: [[String]], barrier: Bool, timeLimit: Double
    ) async throws -> (release: UInt64, reports: [MultiProcessReport]) {
        var children: [LineChild] = []
        do {
            for childArguments in arguments { children.append(try LineChild.launch(childArguments)) }
        } catch {
            for child in children {
                child.kill()
                _ = await child.finish()
            }
            throw error
        }
        let all = children
        let watchdog = Watchdog(seconds: timeLimit) { for child in all { child.kill() } }
        defer { watchdog.cancel() }

        var problems: [String] = []
        var release = MonotonicClock.nanoseconds()
        if barrier {
            for (index, child) in children.enumerated() {
                let line = await child.nextLine()
                if line != "ready" {
                    problems.append(
                        "process \(index) said \(line.map { "'\($0)'" } ?? "nothing") instead of ready")
                }
            }
            if !problems.isEmpty {
                for child in children { child.kill() }
            } else {
                release = MonotonicClock.nanoseconds()
                for child in children { child.send("go") }
            }
        }
        var reports: [MultiProcessReport?] = []
        for child in children {
            let line = problems.isEmpty ? await child.nextLine() : nil
            reports.append(line.flatMap { try? JSONDecoder().decode(MultiProcessReport.self, from: Data($0.utf8)) })
        }
        for (index, child) in children.enumerated() {
            let outcome = await child.finish()
            if outcome.status != 0 || reports[index] == nil {
                problems.append(
                    "process \(index) (pid \(child.processIdentifier), __child \(child.arguments.joined(separator: " "))) exit status \(outcome.status)\(reports[index] == nil ? ", no report" : ""); its standard error: \(outcome.errors.isEmpty ? "(empty)" : outcome.errors)"
                )
            }
        }
        if watchdog.fired { problems.insert("not done within \(Int(timeLimit)) s: every child killed", at: 0) }
        guard problems.isEmpty else {
            throw BenchError.harness("mp children failed:\n  " + problems.joined(separator: "\n  "))
        }
        return (release, reports.map { $0! })
    }
}

/// The `mp` suite's children (`folio-bench __child mp-update|mp-idle|mp-first-write ...`):
/// each opens the store with ``CrudSystem/openShared(directory:durability:busyTimeout:)``, prints one
/// ``MultiProcessReport`` line, then closes.
enum MultiProcessChild {
    /// - `mp-update`: opens, says `ready`, waits for a line on standard input, then makes
    ///   `--count` updates of ids `--first`... in a random order, one transaction each.
    /// - `mp-first-write`: opens (timed apart), then makes the `--count` updates at once.
    /// - `mp-idle`: opens, says `ready`, waits for a line; then reads record `--first` until
    ///   it is the updated one (every 10 ms, 5 s at most).
    static func run(
        _ kind: String, system: any CrudSystem.Type, directory: String, n: Int, first: Int64, count: Int,
        label: String, durability: BenchDurability, busyTimeout: Double?
    ) async throws {
        let ids = first...(first + Int64(count) - 1)
        let records = shuffledIndices(count, seed: UInt64(first)).map {
            MultiProcessWorkloads.updated(id: first + Int64($0), n: n, label: label)
        }
        let openStart = MonotonicClock.nanoseconds()
        let store = try await system.openShared(directory: directory, durability: durability, busyTimeout: busyTimeout)
        let openSeconds = MonotonicClock.seconds(from: openStart, to: MonotonicClock.nanoseconds())
        if kind != "mp-first-write" {
            ParentLines.send("ready")
            guard await ParentLines.receive() != nil else {
                throw BenchError.harness("standard input ended before the start")
            }
        }
        var report = MultiProcessReport(
            openSeconds: openSeconds, startNanoseconds: MonotonicClock.nanoseconds(), endNanoseconds: 0,
            operations: 0, peakRSSBytes: 0)
        if kind == "mp-idle" {
            let expected = records[0]
            var reads = 0
            var seen = false
            while !seen && MonotonicClock.seconds(from: report.startNanoseconds, to: MonotonicClock.nanoseconds()) < 5 {
                if reads > 0 { try await Task.sleep(for: .microseconds(500)) }
                reads += 1
                seen = try await store.fetch(id: ids.lowerBound) == expected
            }
            report.probeSeen = seen
            report.probeReads = reads
        } else {
            var longest: UInt64 = 0
            for record in records {
                let before = MonotonicClock.nanoseconds()
                do {
                    try await store.update(record)
                } catch {
                    let elapsed = MonotonicClock.seconds(
                        from: report.startNanoseconds, to: MonotonicClock.nanoseconds())
                    throw BenchError.harness(
                        "update \(report.operations + 1) of \(count) (record \(record.id)) failed \(Format.seconds(elapsed)) after the start: \(String(reflecting: error))"
                    )
                }
                report.operations += 1
                longest = max(longest, MonotonicClock.nanoseconds() - before)
            }
            report.longestUpdateSeconds = Double(longest) / 1e9
        }
        report.endNanoseconds = MonotonicClock.nanoseconds()
        report.peakRSSBytes = PeakMemory.peakBytes()
        ParentLines.send(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
        try await store.close()
    }
}
