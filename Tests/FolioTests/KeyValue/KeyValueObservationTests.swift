import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage

/// `values.observe(key)` in this process: the current value first, then each committed
/// value in order (the test waits for each before the next commit, so `keepLatest` has
/// nothing to drop), removals as the default, transactions' values, and the end of the
/// sequence with a typed error once the stored value no longer decodes as the key's type.
@Suite struct KeyValueObservationTests {
    /// What a consumer task received, for the test to wait on.
    final class Received<Value: Sendable>: Sendable {
        let values = Mutex<[Value]>([])
        let failure = Mutex<FolioError?>(nil)
        let ended = Atomic<Bool>(false)
        var all: [Value] { values.withLock { $0 } }
    }

    static func consume<Value>(_ updates: ValueUpdates<Value>, into received: Received<Value>) -> Task<Void, Never> {
        Task.detached {
            do {
                for try await value in updates { received.values.withLock { $0.append(value) } }
            } catch {
                received.failure.withLock {
                    $0 = error as? FolioError ?? .storage(.transactionAborted(cause: "not a FolioError: \(error)"))
                }
            }
            received.ended.store(true, ordering: .releasing)
        }
    }

    @Test func currentValueFirstThenCommittedValuesInOrderThenADecodingFailure() async throws {
        let persistence = Persistence.inMemory(options: KV.options())
        defer { persistence.close() }
        let values = persistence.values
        let key = ValueKey<Int>("o/count", default: -1)
        try values.set(1, for: key)
        try await values.flush()

        let received = Received<Int>()
        let consumer = Self.consume(values.observe(key), into: received)
        defer { consumer.cancel() }
        #expect(await KV.eventually { received.all == [1] }, "first value: \(received.all)")

        var expected = [1]
        func commit(_ value: Int, _ write: () async throws -> Void) async throws {
            try await write()
            expected.append(value)
            let arrived = await KV.eventually { received.all.count >= expected.count }
            #expect(arrived && received.all == expected, "after committing \(value): \(received.all)")
        }
        for n in 2...6 {
            try await commit(n) {
                try values.set(n, for: key)
                try await values.flush()
            }
        }
        try await commit(7) { try await persistence.perform { try values.set(7, for: key) } }
        try await commit(-1) {  // a removal gives the default
            try values.removeValue(for: key)
            try await values.flush()
        }
        try await commit(8) { try await persistence.perform { try values.set(8, for: key) } }

        // Commits of other keys, and a transaction that rolls back, deliver nothing.
        try values.set(1, for: ValueKey<Int>("o/other", default: 0))
        try await values.flush()
        struct Refused: Error {}
        _ = try? await persistence.perform {
            try values.set(99, for: key)
            throw Refused()
        }

        // The same name written as a String: the sequence ends with a typed error naming it.
        try values.set("eight", for: ValueKey<String>("o/count", default: ""))
        try await values.flush()
        #expect(await KV.eventually { received.ended.load(ordering: .acquiring) }, "the sequence did not end")
        #expect(received.all == [1, 2, 3, 4, 5, 6, 7, -1, 8], "\(received.all)")
        let failure = received.failure.withLock { $0 }
        guard case .valueDecodingFailed(let name, let type, _) = failure else {
            Issue.record("ended with \(String(describing: failure)), not valueDecodingFailed")
            return
        }
        #expect(name == "o/count")
        #expect(type == "Swift.Int")
    }

    /// Observing a key that already holds a value of another type fails at once, and a key
    /// with no value starts from its default.
    @Test func observingAnUndecodableKeyFailsFirstAndAnAbsentKeyStartsAtItsDefault() async throws {
        let persistence = Persistence.inMemory(options: KV.options())
        defer { persistence.close() }
        let values = persistence.values
        try values.set(KVPoint(x: 1, label: "a"), for: ValueKey<KVPoint>("o/point", default: KVPoint(x: 0, label: "")))
        try await values.flush()
        let wrong = Received<Int>()
        let consumer = Self.consume(values.observe(ValueKey<Int>("o/point", default: 0)), into: wrong)
        defer { consumer.cancel() }
        #expect(await KV.eventually { wrong.ended.load(ordering: .acquiring) })
        #expect(wrong.all.isEmpty)
        if case .valueDecodingFailed(let name, _, _) = wrong.failure.withLock({ $0 }) {
            #expect(name == "o/point")
        } else {
            Issue.record("ended with \(String(describing: wrong.failure.withLock { $0 }))")
        }

        let absent = Received<String?>()
        let second = Self.consume(values.observe(ValueKey<String?>("o/absent")), into: absent)
        defer { second.cancel() }
        #expect(await KV.eventually { absent.all.count == 1 })
        #expect(absent.all == [nil])
    }
}
