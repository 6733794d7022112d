import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport

/// The key-value store against a model: a seeded random sequence of sets and removals
/// outside transactions (Int and struct keys), `perform`s that commit or throw, nested
/// `perform`s that throw and are caught, `read { }` snapshots while a detached task sets
/// values, flushes, reopens (with and without a flush first) and prefix listings; after
/// every step every key, `contains` and `keys(withPrefix:)` must equal the model.
/// `FOLIO_STRESS_TESTS=1` runs more seeds and steps. A failure names its seed and step.
@Suite struct KeyValueModelTests {
    static var seeds: [UInt64] { KV.isLong ? Array(1...24) : [1, 2, 3] }
    static var steps: Int { KV.isLong ? 3_000 : 250 }

    @Test(arguments: seeds)
    func onDiskStoreMatchesTheModel(seed: UInt64) async throws {
        let path = KV.temporaryPath("model")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await KeyValueModelRun.run(
            seed: seed, steps: Self.steps, path: path,
            options: KV.options(durability: .grouped(window: .milliseconds(2))))
    }

    @Test(arguments: seeds)
    func fullDurabilityInMemoryMatchesTheModel(seed: UInt64) async throws {
        try await KeyValueModelRun.run(
            seed: seed &+ 1_000, steps: Self.steps, path: nil, options: KV.options(durability: .full))
    }

    /// The strict model: a `read { }` begun right after sets outside transactions (no flush
    /// between) must see them: a `Persistence.read` that took the store's committed view, with
    /// key-value reads inside it that ignored this process's writes not yet published, would
    /// fail it (see KeyValueVisibilityTests.aReadScopeBegunAfterASetSeesIt). The other
    /// model runs flush before each `read { }` so that they keep checking everything else.
    @Test(arguments: seeds)
    func readScopesWithoutAFlushFirstMatchTheModel(seed: UInt64) async throws {
        try await KeyValueModelRun.run(
            seed: seed &+ 2_000, steps: Self.steps, path: nil, options: KV.options(durability: .full),
            flushBeforeRead: false)
    }
}

/// One model run (shared with ``KeyValueCacheExactnessTests``, which runs it with other caches).
enum KeyValueModelRun {
    static let intKeys = (0..<5).map { ValueKey<Int>("m/i\($0)", default: -1) }
    static let pointKeys = (0..<3).map { ValueKey<KVPoint>("m/p\($0)", default: KVPoint(x: 0, label: "default")) }

    /// What the store should hold: an Int or a point per present key.
    struct Model: Equatable, CustomStringConvertible {
        var ints: [String: Int] = [:]
        var points: [String: KVPoint] = [:]
        var names: [String] {
            (Array(ints.keys) + Array(points.keys)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
        var description: String {
            "ints \(ints.sorted { $0.key < $1.key }) points \(points.sorted { $0.key < $1.key })"
        }
    }

    /// One write: set an Int, set a point, or remove, of one key.
    enum Write: CustomStringConvertible {
        case int(Int, Int)  // key index, value
        case point(Int, KVPoint)
        case removeInt(Int)
        case removePoint(Int)

        static func random(_ rng: inout SplitMix64) -> Write {
            switch rng.next() % 6 {
            case 0, 1, 2: return .int(Int(rng.next() % UInt64(intKeys.count)), Int(rng.next() % 1_000))
            case 3, 4:
                let x = Int(rng.next() % 1_000)
                return .point(Int(rng.next() % UInt64(pointKeys.count)), KVPoint(x: x, label: "p\(x)"))
            default:
                return rng.next() % 2 == 0
                    ? .removeInt(Int(rng.next() % UInt64(intKeys.count)))
                    : .removePoint(Int(rng.next() % UInt64(pointKeys.count)))
            }
        }

        func apply(_ values: KeyValueStore<ReadWrite>) throws {
            switch self {
            case .int(let i, let v): try values.set(v, for: intKeys[i])
            case .point(let i, let p): try values.set(p, for: pointKeys[i])
            case .removeInt(let i): try values.removeValue(for: intKeys[i])
            case .removePoint(let i): try values.removeValue(for: pointKeys[i])
            }
        }

        func apply(_ model: inout Model) {
            switch self {
            case .int(let i, let v): model.ints[intKeys[i].name] = v
            case .point(let i, let p): model.points[pointKeys[i].name] = p
            case .removeInt(let i): model.ints[intKeys[i].name] = nil
            case .removePoint(let i): model.points[pointKeys[i].name] = nil
            }
        }

        var description: String {
            switch self {
            case .int(let i, let v): return "set m/i\(i)=\(v)"
            case .point(let i, let p): return "set m/p\(i)=\(p)"
            case .removeInt(let i): return "remove m/i\(i)"
            case .removePoint(let i): return "remove m/p\(i)"
            }
        }
    }

    /// Every key read (throwing and subscript), `contains`, and the prefix listings, against
    /// `model`. Returns false (after recording) on the first difference.
    @discardableResult
    static func check(
        _ values: KeyValueStore<ReadWrite>, _ model: Model, _ where: @autoclosure () -> String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        var differences: [String] = []
        for key in intKeys {
            let expected = model.ints[key.name]
            do {
                let read = try values.value(for: key)
                if read != (expected ?? key.defaultValue) {
                    differences.append("\(key.name) read \(read), model \(expected.map(String.init) ?? "absent")")
                }
                if try values.contains(key) != (expected != nil) {
                    differences.append("contains(\(key.name)) != \(expected != nil)")
                }
            } catch { differences.append("\(key.name) threw \(error)") }
        }
        for key in pointKeys {
            let expected = model.points[key.name]
            do {
                let read = try values.value(for: key)
                if read != (expected ?? key.defaultValue) {
                    differences.append("\(key.name) read \(read), model \(expected?.description ?? "absent")")
                }
                if values[key] != read { differences.append("\(key.name) subscript differs from value(for:)") }
                if try values.contains(key) != (expected != nil) {
                    differences.append("contains(\(key.name)) != \(expected != nil)")
                }
            } catch { differences.append("\(key.name) threw \(error)") }
        }
        do {
            let listed = try values.keys(withPrefix: "m/")
            if listed != model.names { differences.append("keys(withPrefix: \"m/\") \(listed), model \(model.names)") }
            let points = try values.keys(withPrefix: "m/p")
            if points != model.names.filter({ $0.hasPrefix("m/p") }) {
                differences.append("keys(withPrefix: \"m/p\") \(points)")
            }
        } catch { differences.append("keys threw \(error)") }
        if differences.isEmpty { return true }
        Issue.record("\(`where`()): \(differences.joined(separator: "; "))", sourceLocation: sourceLocation)
        return false
    }

    struct Refused: Error {}

    /// Two `perform`s open at once, each setting its writes without reading (blind), the
    /// second committing after the first (it waits for the first's `perform` to return):
    /// both commit in their shared turns, the second's commit replayed onto the first's.
    static func concurrentPair(_ first: [Write], _ second: [Write], persistence: Persistence<ReadWrite>) async throws {
        let values = persistence.values
        // Values set outside transactions are committed first: their commit runs alone,
        // after the running transactions end and before new ones begin, so if it came
        // between the two `perform`s below, the first (waiting in its body for the second to
        // begin) and the second (waiting behind that commit) would wait for each other
        // until the meeting gives up. `perform`'s documentation says a body must not wait for
        // another to begin; the pair does so only to prove the two run at once.
        try await values.flush()
        let meeting = KeyValueConcurrentTransactionTests.Meeting()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await persistence.perform {
                    for write in first { try write.apply(values) }
                    await meeting.meet("first")
                }
                meeting.firstReturned.store(true, ordering: .releasing)
            }
            group.addTask {
                try await persistence.perform {
                    for write in second { try write.apply(values) }
                    await meeting.meet("second")
                    if !(await KV.eventually { meeting.firstReturned.load(ordering: .acquiring) }) {
                        Issue.record("the first transaction of a concurrent pair never returned")
                    }
                }
            }
            try await group.waitForAll()
        }
        // Blind writes do not conflict: each body ran once.
        #expect(meeting.runs.withLock { $0 } == ["first": 1, "second": 1])
    }

    /// Runs `steps` random steps of seed `seed` on a store at `path` (in memory if nil).
    /// `flushBeforeRead`: flush before each `read { }` (the snapshot then starts from
    /// committed values only; see ``KeyValueModelTests/readScopesWithoutAFlushFirstMatchTheModel(seed:)``).
    static func run(
        seed: UInt64, steps: Int, path: String?, options: PersistenceOptions, flushBeforeRead: Bool = true
    ) async throws {
        var rng = SplitMix64(seed: seed)
        var persistence =
            try path.map { try Persistence(at: $0, options: options) } ?? Persistence.inMemory(options: options)
        defer { persistence.close() }
        var model = Model()
        var recent: [String] = []  // the last steps, for the failure message
        func note(_ step: String) {
            recent.append(step)
            if recent.count > 12 { recent.removeFirst() }
        }
        for step in 0..<steps {
            let values = persistence.values
            let here = { "seed \(seed) step \(step) after [\(recent.joined(separator: ", "))]" }
            switch rng.next() % 100 {
            case 0..<45:  // sets and removals outside transactions
                for _ in 0..<(1 + Int(rng.next() % 4)) {
                    let write = Write.random(&rng)
                    try write.apply(values)
                    write.apply(&model)
                    note(write.description)
                }
            case 45..<50:  // two transactions at once, setting blind; the second commits last
                let first = (0..<(1 + Int(rng.next() % 3))).map { _ in Write.random(&rng) }
                let second = (0..<(1 + Int(rng.next() % 3))).map { _ in Write.random(&rng) }
                try await concurrentPair(first, second, persistence: persistence)
                for write in first + second { write.apply(&model) }
                note("at once \(first) then \(second)")
            case 50..<57:  // a transaction that commits, reading its own writes
                let writes = (0..<(1 + Int(rng.next() % 4))).map { _ in Write.random(&rng) }
                var inside = model
                for write in writes { write.apply(&inside) }
                try await persistence.perform {
                    for write in writes { try write.apply(values) }
                    check(values, inside, "\(here()) inside perform \(writes)")
                }
                model = inside
                note("perform \(writes)")
            case 57..<64:  // a transaction that throws: nothing it wrote is kept
                let writes = (0..<(1 + Int(rng.next() % 4))).map { _ in Write.random(&rng) }
                do {
                    try await persistence.perform {
                        for write in writes { try write.apply(values) }
                        throw Refused()
                    }
                    Issue.record("\(here()): perform did not throw")
                } catch is Refused {}
                note("rolled back \(writes)")
            case 64..<70:  // a nested perform that throws and is caught; the outer commits
                let before = Write.random(&rng), inner = Write.random(&rng), after = Write.random(&rng)
                var outer = model
                before.apply(&outer)
                var final = outer
                after.apply(&final)
                try await persistence.perform {
                    try before.apply(values)
                    do {
                        try await persistence.perform {
                            try inner.apply(values)
                            throw Refused()
                        }
                    } catch is Refused {}
                    check(values, outer, "\(here()) after a caught nested perform (\(before), inner \(inner))")
                    try after.apply(values)
                }
                model = final
                note("perform \(before) [nested \(inner) thrown] \(after)")
            case 70..<80:  // a snapshot: the model as of its start, whatever a detached task sets meanwhile
                let writes = (0..<(1 + Int(rng.next() % 3))).map { _ in Write.random(&rng) }
                let flushDuring = rng.next() % 2 == 0
                let snapshot = model
                if flushBeforeRead { try await values.flush() }
                try await persistence.read {
                    check(values, snapshot, "\(here()) read { } at its start")
                    try await Task.detached {
                        for write in writes { try write.apply(values) }
                        if flushDuring { try await values.flush() }
                    }.value
                    check(values, snapshot, "\(here()) read { } after a detached task set \(writes)")
                }
                for write in writes { write.apply(&model) }
                note("read { detached \(writes)\(flushDuring ? " + flush" : "") }")
            case 80..<84:  // no flush: background commits alone empty the queue (liveness)
                let drained = await KV.eventually { !persistence.core.values.hasQueued }
                if !drained { Issue.record("\(here()): values stayed queued without a flush") }
                note("wait for background commits")
            case 84..<88:
                try await values.flush()
                note("flush")
            case 88..<94:  // reopen after a flush: everything durable
                try await values.flush()
                persistence = try persistence.reopened()
                note("flush + reopen")
            case 94..<97:  // reopen without a flush: close commits what is queued
                persistence = try persistence.reopened()
                note("reopen (no flush)")
            default:  // a read-only persistence sharing the engine sees the flushed values
                try await values.flush()
                let reader = persistence.readOnly()
                for key in intKeys where reader.values[key] != (model.ints[key.name] ?? key.defaultValue) {
                    Issue.record("\(here()): read-only view of \(key.name) is \(reader.values[key])")
                }
                note("flush + read-only check")
            }
            if !check(persistence.values, model, "\(here())") { return }
        }
        try await persistence.values.flush()
        persistence = try persistence.reopened()
        check(persistence.values, model, "seed \(seed) at the end, reopened")
    }
}
