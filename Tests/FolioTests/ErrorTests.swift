import Testing
import Foundation
@_spi(Engine) @testable import Folio
import FolioStorage

@Suite struct ErrorTests {
    /// A stored record that does not decode is a typed error naming datastore, record and
    /// version, never a crash; delete refuses (it would have to return it);
    /// deleteWithoutDecoding removes it; persist replaces it and returns nil.
    @Test func badRecordsAreTypedErrors() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await authors.persist(Author(id: 1, name: "A", born: 1))
        let id = KeyEncoding.encode(2)
        let garbage = try StoredRecord.encode(
            version: "1", indexKeys: [("name", [KeyEncoding.encode("B")])], payload: Array("{not json".utf8))
        let future = try StoredRecord.encode(version: "9", indexKeys: [], payload: Array("{}".utf8))
        try persistence.store.write { txn in
            try txn.put(garbage, for: id, in: "records/authors")
            try txn.put(future, for: KeyEncoding.encode(3), in: "records/authors")
        }
        await #expect { _ = try await authors.load(2) } throws: { error in
            guard case FolioError.decodingFailed(let datastore, let identifier, let version, _) = error else {
                return false
            }
            return datastore == "authors" && identifier == "2" && version == "1"
        }
        await #expect(throws: FolioError.unknownVersion(datastore: "authors", identifier: "3", version: "9")) {
            _ = try await authors.load(3)
        }
        await #expect(throws: FolioError.self) { _ = try await authors.load(...).collect() }
        await #expect(throws: FolioError.self) { try await authors.delete(2) }
        await #expect(throws: FolioError.self) { try await authors.delete(3) }
        #expect(try await authors.deleteWithoutDecoding(2))
        // persist replaces a record that does not decode; it returns nil for it.
        #expect(try await authors.persist(Author(id: 3, name: "C", born: 3)) == nil)
        #expect(
            try await authors.load(...).collect() == [
                Author(id: 1, name: "A", born: 1), Author(id: 3, name: "C", born: 3),
            ])
        try await authors.persist(Author(id: 2, name: "B", born: 2))
        #expect(try await authors.count() == 3)
    }

    /// verify notices an index entry that is missing, and one that points nowhere.
    @Test func verifyFindsIndexRecordDisagreement() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        for n in 0..<20 { try await authors.persist(Author(id: n, name: "n\(n)", born: n)) }
        expectSound(persistence)
        try persistence.store.write { txn in
            try txn.remove(KeyEncoding.encode("n5") + KeyEncoding.encode(5), from: "index/authors/name")
            try txn.put(
                IndexEntry.value(identifier: KeyEncoding.encode(77), record: nil),
                for: KeyEncoding.encode("ghost") + KeyEncoding.encode(77), in: "index/authors/name")
        }
        let report = persistence.verify()
        #expect(report.problems.count == 2)
        #expect(report.problems.contains { $0.index == "name" && $0.detail.contains("has no entry") })
        #expect(report.problems.contains { $0.index == "name" && $0.detail.contains("does not exist") })
    }

    /// Read-only persistence: reads work, including through built indexes; no write API.
    @Test func readOnlyPersistenceReads() async throws {
        let (writer, path, cleanup) = try diskPersistence()
        defer { cleanup() }
        let books = writer.datastore(for: BookFormat.self)
        try await writer.perform { for n in 0..<50 { try await books.persist(makeBook(n)) } }
        let reader = try Persistence(readingFrom: path, options: PersistenceOptions(log: { _ in }))
        defer { reader.close() }
        let readBooks = reader.datastore(for: BookFormat.self)
        #expect(try await readBooks.count() == 50)
        #expect(try await readBooks.load(makeBook(7).isbn, from: \.isbn) == makeBook(7))
        #expect(try await readBooks.load(1901..<1910, from: \.year).collect().count == 9)
        let countInSnapshot = try await reader.perform { try await readBooks.count() }
        #expect(countInSnapshot == 50)
        // `readBooks.persist(...)` does not compile: Persistence<ReadOnly> has no write API.
        expectSound(reader)
    }
}

/// Streaming: iterating 100,000 records holds one decoded record at a time (the consumer's),
/// however long the range: the sequence fetches a leaf page at a time and decodes lazily.
@Suite struct StreamingTests {
    final class Token: @unchecked Sendable {
        nonisolated(unsafe) static var alive = 0
        nonisolated(unsafe) static var peak = 0
        init() { Token.alive += 1; Token.peak = max(Token.peak, Token.alive) }
        deinit { Token.alive -= 1 }
    }

    struct Tracked: Codable, Identifiable, Sendable {
        var id: Int
        var text: String
        var token = Token()
        enum CodingKeys: String, CodingKey { case id, text }
    }

    struct TrackedFormat: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "tracked"
        static let currentVersion = Version.one
        typealias Instance = Tracked
    }

    @Test func streamingHoldsOneRecordAtATime() async throws {
        let persistence = Persistence.inMemory(options: PersistenceOptions(durability: .grouped))
        let tracked = persistence.datastore(for: TrackedFormat.self)
        for batch in 0..<10 {
            try await persistence.perform {
                for id in (batch * 10_000)..<((batch + 1) * 10_000) {
                    try await tracked.persist(Tracked(id: id, text: String(repeating: "x", count: 100)))
                }
            }
        }
        Token.peak = Token.alive
        let before = Token.alive
        var count = 0
        var last = -1
        for try await record in tracked.load(...) {
            #expect(record.id == last + 1)
            last = record.id
            count += 1
        }
        #expect(count == 100_000)
        #expect(
            Token.peak - before <= 2,
            "at most the current record (and the one being replaced) alive: peak \(Token.peak - before)")
    }
}
