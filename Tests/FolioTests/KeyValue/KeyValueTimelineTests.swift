import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage

/// Readers and writers of the key-value store at the same time, as timelines (GRDB's
/// reader/writer tests): a reader never sees a value go backwards; a transaction is ordered
/// at its commit against sets outside it; synchronous reads and sets never wait for a
/// transaction that holds the writer. Deadlines only turn a hang into a failure.
@Suite struct KeyValueTimelineTests {
    static let durabilities: [FolioStorage.Durability] = [.full, .grouped(window: .milliseconds(5))]

    // MARK: (a) monotonic reads

    /// Writer: sets 1...N of one key, every fifth in a `perform`, the others outside
    /// transactions, flushing now and then. Reader, in a tight loop on another task: each
    /// value read is at least the previous one, and the reader reaches N. It holds because
    /// the switch from memory to the store is atomic by generation: otherwise an older set's
    /// batch could hide a perform the store already shows, and the reader would read the
    /// perform's value and then the set just before it. That race is rare: a
    /// FOLIO_STRESS_TESTS=1 run alongside the model suites (grouped, cached) is likeliest
    /// to hit it.
    @Test(arguments: durabilities, [true, false])
    func aReaderNeverSeesAValueGoBackwards(durability: FolioStorage.Durability, cached: Bool) async throws {
        let persistence = Persistence.inMemory(
            options: KV.options(durability: durability, valueCache: cached ? RecordCacheLimits() : nil))
        defer { persistence.close() }
        let values = persistence.values
        let key = ValueKey<Int>("t/counter", default: 0)
        let other = ValueKey<Int>("t/other", default: 0)
        let count = KV.isLong ? 20_000 : 1_500
        let done = Atomic<Bool>(false)
        let reader = Task.detached { () -> (reads: Int, backwards: [String]) in
            var last = 0, reads = 0
            var backwards: [String] = []
            while !done.load(ordering: .acquiring) || last < count {
                let value = values[key]
                reads += 1
                if value < last, backwards.count < 5 { backwards.append("read \(value) after \(last) (read \(reads))") }
                last = max(last, value)
                if reads % 64 == 0 { await Task.yield() }
                if done.load(ordering: .acquiring) && value == count { break }
                if done.load(ordering: .acquiring) && reads > 50_000_000 { break }  // guard: never reached N
            }
            return (reads, backwards)
        }
        for n in 1...count {
            if n % 5 == 0 {
                try await persistence.perform {
                    try values.set(n, for: key)
                    try values.set(n, for: other)
                }
            } else {
                try values.set(n, for: key)
            }
            if n % 97 == 0 { try await values.flush() }
            if n % 16 == 0 { await Task.yield() }
        }
        done.store(true, ordering: .releasing)
        let outcome = await reader.value
        #expect(outcome.backwards.isEmpty, "\(outcome.backwards)")
        #expect(values[key] == count)
        try await values.flush()
        #expect(try persistence.reopened().values[key] == count)
    }

    /// The same from a `read { }` on each iteration: a snapshot taken later never shows an
    /// older value than one taken, or read outside, earlier (a `read { }` that did not see
    /// this process's sets not yet published would return an older value right after a read
    /// outside returned n; see KeyValueVisibilityTests).
    @Test(arguments: durabilities)
    func snapshotsNeverGoBackwardsEither(durability: FolioStorage.Durability) async throws {
        let persistence = Persistence.inMemory(options: KV.options(durability: durability))
        defer { persistence.close() }
        let values = persistence.values
        let key = ValueKey<Int>("t/snap", default: 0)
        let count = KV.isLong ? 5_000 : 400
        let done = Atomic<Bool>(false)
        let reader = Task.detached { () -> [String] in
            var last = 0
            var backwards: [String] = []
            while !done.load(ordering: .acquiring) {
                let outside = values[key]
                if outside < last, backwards.count < 5 { backwards.append("outside read \(outside) after \(last)") }
                last = max(last, outside)
                let inside = try await persistence.read { values[key] }
                if inside < last, backwards.count < 5 { backwards.append("read { } saw \(inside) after \(last)") }
                last = max(last, inside)
                await Task.yield()
            }
            return backwards
        }
        for n in 1...count {
            if n % 4 == 0 {
                try await persistence.perform { try values.set(n, for: key) }
            } else {
                try values.set(n, for: key)
            }
            if n % 8 == 0 { await Task.yield() }
        }
        try await values.flush()
        done.store(true, ordering: .releasing)
        let backwards = try await reader.value
        #expect(backwards.isEmpty, "\(backwards)")
    }

    // MARK: (b) ordering of transactions and sets outside them

    /// A perform writes K; while it is open, a set outside it writes K (before and after the
    /// transaction's own write of K): the transaction, ordered at its commit, wins, also
    /// after a queued set of K was committed when the transaction began. A set after the
    /// perform returned wins over it. Checked in this process, after flush, and reopened.
    @Test(arguments: durabilities)
    func aTransactionIsOrderedAtItsCommitAndALaterSetWins(durability: FolioStorage.Durability) async throws {
        let path = KV.temporaryPath("order")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var persistence = try Persistence(at: path, options: KV.options(durability: durability))
        defer { persistence.close() }
        let key = ValueKey<String>("owner", default: "")
        let bystander = ValueKey<Int>("bystander", default: 0)
        for round in 0..<(KV.isLong ? 200 : 20) {
            let values = persistence.values
            try values.set("queued \(round)", for: key)  // committed as the transaction begins
            try values.set(round, for: bystander)
            try await persistence.perform {
                #expect(values[key] == "queued \(round)", "round \(round): the transaction reads the set before it")
                if round % 2 == 0 {  // the outside set comes before the transaction's write
                    try await Task.detached { try values.set("outside \(round)", for: key) }.value
                    try values.set("transaction \(round)", for: key)
                } else {  // after it
                    try values.set("transaction \(round)", for: key)
                    try await Task.detached { try values.set("outside \(round)", for: key) }.value
                }
                // Outside, the set is what a reader sees until the transaction commits.
                let seenOutside = try await Task.detached { values[key] }.value
                #expect(seenOutside == "outside \(round)", "round \(round)")
            }
            #expect(values[key] == "transaction \(round)", "round \(round): right after the perform")
            try await values.flush()
            #expect(values[key] == "transaction \(round)", "round \(round): after flush")
            #expect(values[bystander] == round)
            if round % 5 == 4 {
                persistence = try persistence.reopened()
                #expect(persistence.values[key] == "transaction \(round)", "round \(round): reopened")
            }
            // And a set after the perform returned wins over it.
            try persistence.values.set("after \(round)", for: key)
            #expect(persistence.values[key] == "after \(round)")
            if round % 3 == 0 {
                try await persistence.values.flush()
                persistence = try persistence.reopened()
                #expect(persistence.values[key] == "after \(round)", "round \(round): reopened after the later set")
            }
        }
    }

    /// A transaction that does not end up writing K (its only write of K was in a nested
    /// `perform` that threw and was caught) must not override a set of K made outside it
    /// while it was open: the outside set stands. Were the key left in
    /// `TransactionContext.writtenValues` after the savepoint's rollback, at commit
    /// `valuesSuperseding` would read K's pre-transaction value from the transaction and
    /// `KeyValueMemory.supersede` would replace the outside set with it: the set would be
    /// lost and K would go back to the value it had before either write.
    @Test(arguments: [false, true])
    func anOutsideSetSurvivesATransactionWhoseOnlyWriteOfTheKeyRolledBack(outsideFirst: Bool) async throws {
        let persistence = Persistence.inMemory(options: KV.options())
        defer { persistence.close() }
        let values = persistence.values
        let key = ValueKey<Int>("rolled/back", default: 0)
        try values.set(1, for: key)
        try await values.flush()
        struct Refused: Error {}
        try await persistence.perform {
            if outsideFirst { try await Task.detached { try values.set(3, for: key) }.value }
            do {
                try await persistence.perform {
                    try values.set(2, for: key)
                    throw Refused()
                }
            } catch is Refused {}
            if !outsideFirst { try await Task.detached { try values.set(3, for: key) }.value }
            #expect(values[key] == 1, "inside, the rolled-back write is gone")
        }
        #expect(values[key] == 3, "the outside set was replaced by the transaction's unchanged value")
        try await values.flush()
        #expect(values[key] == 3)
        #expect(try persistence.reopened().values[key] == 3)
    }

    // MARK: (c) sync reads and sets never wait for the writer

    /// A perform holds the writer, suspended on a continuation this test resumes. Meanwhile
    /// another task reads a cached key, a cold key (committed before a reopen, never read
    /// since), a key the open transaction wrote (the committed value, not the transaction's),
    /// lists keys, and sets values: all of it completes while the transaction is still open.
    @Test(arguments: [true, false])
    func syncReadsAndSetsCompleteWhileATransactionHoldsTheWriter(cached: Bool) async throws {
        let path = KV.temporaryPath("nowait")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let options = KV.options(valueCache: cached ? RecordCacheLimits() : nil)
        do {
            let setup = try Persistence(at: path, options: options)
            for i in 0..<20 { try setup.values.set(i, for: ValueKey<Int>("w/\(i)", default: -1)) }
            try await setup.values.flush()
            setup.close()
        }
        let persistence = try Persistence(at: path, options: options)
        defer { persistence.close() }
        let values = persistence.values
        let hot = ValueKey<Int>("w/0", default: -1)
        let cold = ValueKey<Int>("w/7", default: -1)
        let written = ValueKey<Int>("w/1", default: -1)
        let fresh = ValueKey<Int>("w/new", default: -1)
        #expect(values[hot] == 0)  // now cached (if there is a cache)

        let gate = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let entered = Atomic<Bool>(false)
        let transaction = Task {
            try await persistence.perform {
                try values.set(100, for: written)
                // Held open on its first run only: the sets outside commit meanwhile, so
                // its commit conflicts with theirs and the body runs again, alone.
                if !entered.load(ordering: .acquiring) {
                    await withCheckedContinuation { continuation in
                        gate.withLock { $0 = continuation }
                        entered.store(true, ordering: .releasing)
                    }
                }
            }
        }
        #expect(await KV.eventually { entered.load(ordering: .acquiring) }, "the transaction never started")

        let finished = Atomic<Bool>(false)
        let outside = Task.detached { () -> [String] in
            var wrong: [String] = []
            if values[hot] != 0 { wrong.append("hot \(values[hot])") }
            if values[cold] != 7 { wrong.append("cold \(values[cold])") }
            if values[written] != 1 { wrong.append("written-in-transaction read \(values[written]) outside") }
            do {
                try values.set(55, for: fresh)
                try values.set(70, for: cold)
                if values[fresh] != 55 || values[cold] != 70 { wrong.append("sets not visible at once") }
                let listed = try values.keys(withPrefix: "w/new")
                if listed != ["w/new"] { wrong.append("keys \(listed)") }
            } catch { wrong.append("threw \(error)") }
            finished.store(true, ordering: .releasing)
            return wrong
        }
        let completed = await KV.eventually { finished.load(ordering: .acquiring) }
        #expect(completed, "reads and sets outside waited for the open transaction")
        // Only now is the transaction let go.
        gate.withLock {
            $0?.resume(); $0 = nil
        }
        try await transaction.value
        let wrong = await outside.value
        #expect(wrong.isEmpty, "\(wrong)")
        #expect(values[written] == 100)
        try await values.flush()
        let reopened = try persistence.reopened()
        defer { reopened.close() }
        #expect(reopened.values[fresh] == 55)
        #expect(reopened.values[cold] == 70)
        #expect(reopened.values[written] == 100)
    }
}
