import Testing
import Foundation
@_spi(Engine) @testable import Folio
import FolioStorage

extension ValueKeys {
    static let launchCount = ValueKey<Int>("launchCount", default: 0)
    static let userName = ValueKey<String?>("user/name")
    static let theme = ValueKey<Theme>("user/theme", default: Theme(name: "light", scale: 1))
    static let cursor = ValueKey<String>("sync/cursor", default: "")
}

struct Theme: Codable, Sendable, Equatable {
    var name: String
    var scale: Double
}

/// The key-value store's contract, one behaviour per test: defaults, sets visible at once,
/// durable after flush and at close, removal, prefixes, transactions, snapshots, bad input.
@Suite struct KeyValueBasicsTests {
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.path + "/kv-\(UUID().uuidString)"
    }

    @Test func defaultsThenSetValuesAreReadBackAtOnce() throws {
        let values = Persistence.inMemory().values
        #expect(values[.launchCount] == 0)
        #expect(values[.userName] == nil)
        #expect(try values.contains(.launchCount) == false)
        try values.set(3, for: .launchCount)
        try values.set("Ada", for: .userName)
        try values.set(Theme(name: "dark", scale: 1.5), for: .theme)
        #expect(values[.launchCount] == 3)
        #expect(try values.value(for: .userName) == "Ada")
        #expect(values[.theme] == Theme(name: "dark", scale: 1.5))
        #expect(try values.contains(.launchCount))
    }

    @Test(arguments: [Durability.full, .grouped(window: .milliseconds(50))])
    func flushedValuesSurviveReopen(durability: FolioStorage.Durability) async throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let options = PersistenceOptions(durability: durability, autoCompaction: nil)
        do {
            let persistence = try Persistence(at: path, options: options)
            for n in 1...500 { try persistence.values.set(n, for: .launchCount) }
            try persistence.values.set("Ada", for: .userName)
            try await persistence.values.flush()
            // A second process sees the flushed values before this one closes.
            let reader = try Persistence(readingFrom: path, options: options)
            #expect(reader.values[.launchCount] == 500)
            #expect(reader.values[.userName] == "Ada")
            reader.close()
            persistence.close()
        }
        let reopened = try Persistence(at: path, options: options)
        defer { reopened.close() }
        #expect(reopened.values[.launchCount] == 500)
        #expect(reopened.values[.userName] == "Ada")
    }

    @Test func closeCommitsQueuedValues() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let persistence = try Persistence(at: path)
        for n in 0..<100 { try persistence.values.set(n, for: ValueKey<Int>("k\(n)", default: -1)) }
        persistence.close()
        let reopened = try Persistence(at: path)
        defer { reopened.close() }
        for n in 0..<100 { #expect(reopened.values[ValueKey<Int>("k\(n)", default: -1)] == n) }
    }

    @Test func removeGivesTheDefaultBack() async throws {
        let persistence = Persistence.inMemory()
        let values = persistence.values
        try values.set(7, for: .launchCount)
        try await values.flush()
        try values.removeValue(for: .launchCount)
        #expect(values[.launchCount] == 0)
        #expect(try values.contains(.launchCount) == false)
        try await values.flush()
        let reopened = try persistence.reopened()
        #expect(reopened.values[.launchCount] == 0)
        #expect(try reopened.values.keys() == [])
    }

    @Test func keysByPrefixIncludeUnflushedSetsAndRemovals() async throws {
        let values = Persistence.inMemory().values
        try values.set("a", for: .cursor)
        try values.set("Ada", for: .userName)
        try values.set(Theme(name: "x", scale: 2), for: .theme)
        try values.set(1, for: .launchCount)
        try await values.flush()
        try values.set(
            ValueKey<Int>("user/age", default: 0).defaultValue + 36, for: ValueKey<Int>("user/age", default: 0))
        try values.removeValue(for: .userName)
        #expect(try values.keys(withPrefix: "user/") == ["user/age", "user/theme"])
        #expect(try values.keys() == ["launchCount", "sync/cursor", "user/age", "user/theme"])
        #expect(try values.keys(withPrefix: "nothing") == [])
    }

    @Test func performCommitsValuesWithRecords() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        let unread = ValueKey<Int>("unread", default: 0)
        try await persistence.perform {
            try await authors.persist(Author(id: 1, name: "a", born: 0))
            try persistence.values.set(persistence.values[unread] + 1, for: unread)
            // Inside, the transaction's own write is read back.
            #expect(persistence.values[unread] == 1)
        }
        #expect(persistence.values[unread] == 1)
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await persistence.perform {
                try await authors.persist(Author(id: 2, name: "b", born: 0))
                try persistence.values.set(persistence.values[unread] + 1, for: unread)
                throw Refused()
            }
        }
        #expect(persistence.values[unread] == 1)
        #expect(try await authors.count() == 1)
    }

    @Test func aTransactionReadsValuesSetBeforeItBegan() async throws {
        let persistence = Persistence.inMemory()
        let counter = ValueKey<Int>("counter", default: 0)
        try persistence.values.set(41, for: counter)  // queued, not committed
        try await persistence.perform {
            try persistence.values.set(persistence.values[counter] + 1, for: counter)
        }
        #expect(persistence.values[counter] == 42)
        try await persistence.values.flush()
        #expect(try persistence.reopened().values[counter] == 42)
    }

    @Test func aTransactionCommittedAfterASetOfTheSameKeyWins() async throws {
        let persistence = Persistence.inMemory()
        let key = ValueKey<String>("owner", default: "")
        try await persistence.perform {
            try persistence.values.set("transaction", for: key)
            // A set outside the transaction (a detached task) while it runs: ordered at its
            // call, before the transaction's commit.
            try await Task.detached { try persistence.values.set("outside", for: key) }.value
            #expect(persistence.values[key] == "transaction")
        }
        #expect(persistence.values[key] == "transaction")
        try await persistence.values.flush()
        #expect(persistence.values[key] == "transaction")
        #expect(try persistence.reopened().values[key] == "transaction")
    }

    @Test func readSeesOneSnapshotAndRefusesWrites() async throws {
        let persistence = Persistence.inMemory()
        let values = persistence.values
        try values.set(1, for: .launchCount)
        try await values.flush()
        try await persistence.read {
            #expect(values[.launchCount] == 1)
            try await Task.detached {
                try values.set(2, for: .launchCount)
                try await values.flush()
            }.value
            #expect(values[.launchCount] == 1)
            #expect(throws: FolioError.writeInReadOnlySnapshot) { try values.set(3, for: .launchCount) }
        }
        #expect(values[.launchCount] == 2)
    }

    @Test func aValueOfAnotherTypeIsATypedErrorAndOtherKeysStay() async throws {
        let persistence = Persistence.inMemory()
        let values = persistence.values
        try values.set("not a number", for: ValueKey<String>("launchCount", default: ""))
        try values.set("c", for: .cursor)
        try await values.flush()
        let reopened = try persistence.reopened().values
        #expect(reopened[.launchCount] == 0)
        do {
            _ = try reopened.value(for: .launchCount)
            Issue.record("decoded a string as an Int")
        } catch {
            guard case .valueDecodingFailed(let key, let type, _) = error else { Issue.record("\(error)"); return }
            #expect(key == "launchCount")
            #expect(type == "Swift.Int")
        }
        #expect(reopened[.cursor] == "c")
        try reopened.set(5, for: .launchCount)
        #expect(try reopened.value(for: .launchCount) == 5)
    }

    @Test func badKeysAndValuesAreRefusedAndChangeNothing() async throws {
        let values = Persistence.inMemory().values
        let long = String(repeating: "k", count: ValueKeys.maximumNameLength + 1)
        #expect(throws: FolioError.keyTooLong(key: String(long.prefix(64)), length: 513, maximum: 512)) {
            try values.set(1, for: ValueKey<Int>(long, default: 0))
        }
        #expect(throws: FolioError.keyTooLong(key: String(long.prefix(64)), length: 513, maximum: 512)) {
            _ = try values.value(for: ValueKey<Int>(long, default: 0))
        }
        let exact = String(repeating: "k", count: ValueKeys.maximumNameLength)
        try values.set(1, for: ValueKey<Int>(exact, default: 0))
        let ratio = ValueKey<Double>("ratio", default: 0)
        try values.set(0.5, for: ratio)
        do {
            try values.set(.nan, for: ratio)
            Issue.record("NaN encoded")
        } catch {
            guard case .valueEncodingFailed(let key, _) = error else { Issue.record("\(error)"); return }
            #expect(key == "ratio")
        }
        #expect(values[ratio] == 0.5)
        try await values.flush()
        #expect(values[ratio] == 0.5)
    }

    @Test func writesAfterCloseFail() async throws {
        let persistence = Persistence.inMemory()
        persistence.close()
        #expect(throws: FolioError.self) { try persistence.values.set(1, for: .launchCount) }
        #expect(throws: FolioError.self) { _ = try persistence.values.value(for: .launchCount) }
    }

    @Test func flushInsidePerformDoesNotWaitForItself() async throws {
        let persistence = Persistence.inMemory()
        let values = persistence.values
        try values.set(1, for: .launchCount)
        try await persistence.perform {
            try values.set(2, for: .launchCount)
            // It would deadlock if it waited for the writer slot this transaction holds.
            try await values.flush()
        }
        #expect(try persistence.reopened().values[.launchCount] == 2)
    }

    final class Box: Codable, @unchecked Sendable {
        var text: String
        init(_ text: String) { self.text = text }
    }

    @Test func objectsAreNeverSharedBetweenReads() async throws {
        let persistence = Persistence.inMemory()
        let values = persistence.values
        let key = ValueKey<Box>("box", default: Box(""))
        let written = Box("first")
        try values.set(written, for: key)
        written.text = "changed after set"
        let pending = values[key]
        #expect(pending.text == "first")
        #expect(pending !== written)
        try await values.flush()
        let one = values[key]
        one.text = "changed by a reader"
        #expect(values[key].text == "first")
    }

    @Test func unusualNamesRoundTrip() async throws {
        let persistence = Persistence.inMemory()
        let names = ["", " ", "é", "日本語/キー", "a\u{0}b", "emoji 👩‍👩‍👧", String(repeating: "é", count: 256)]
        for (n, name) in names.enumerated() { try persistence.values.set(n, for: ValueKey<Int>(name, default: -1)) }
        try await persistence.values.flush()
        let reopened = try persistence.reopened()
        for (n, name) in names.enumerated() {
            #expect(reopened.values[ValueKey<Int>(name, default: -1)] == n, "\(name)")
        }
        #expect(try reopened.values.keys().count == names.count)
    }

    /// The store keys names by their UTF-8 bytes; Swift's `String` equality is canonical
    /// equivalence. A precomposed and a decomposed "é" are two keys, before and after a commit.
    @Test func canonicallyEquivalentNamesAreTwoKeys() async throws {
        let persistence = Persistence.inMemory()
        let composed = ValueKey<Int>("caf\u{E9}", default: 0)
        let decomposed = ValueKey<Int>("cafe\u{301}", default: 0)
        #expect(composed.name == decomposed.name)  // Swift says equal; the bytes differ
        try persistence.values.set(1, for: composed)
        try persistence.values.set(2, for: decomposed)
        #expect(persistence.values[composed] == 1 && persistence.values[decomposed] == 2)
        #expect(try persistence.values.keys().count == 2)
        try await persistence.values.flush()
        #expect(persistence.values[composed] == 1 && persistence.values[decomposed] == 2)
        try await persistence.perform { try persistence.values.set(3, for: decomposed) }
        #expect(persistence.values[composed] == 1 && persistence.values[decomposed] == 3)
        let reopened = try persistence.reopened()
        #expect(reopened.values[composed] == 1 && reopened.values[decomposed] == 3)
        #expect(try reopened.values.keys().count == 2)
    }
}
