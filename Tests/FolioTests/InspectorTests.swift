import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage

@Suite struct InspectorTests {
    @Test func inspectorDescribesAndDumpsWithoutTypes() async throws {
        let persistence = Persistence.inMemory()
        let books = persistence.datastore(for: BookFormat.self)
        let all = (0..<100).map { makeBook($0) }
        try await persistence.perform { for book in all { try await books.persist(book) } }
        let inspector = StoreInspector(store: persistence.store)
        let summary = try #require(try inspector.datastores().first)
        #expect(summary.key == "books" && summary.recordCount == 100)
        #expect(summary.identifierType == "Foundation.UUID")
        #expect(summary.indexes.map(\.name) == ["authors", "isbn", "title", "titleAndYear", "year"])
        #expect(summary.indexes.allSatisfy { $0.built })
        #expect(summary.indexes.first { $0.name == "year" }?.valueType == "Swift.Int")
        #expect(summary.indexes.first { $0.name == "isbn" }?.storage == .covering)
        #expect(try inspector.versionsPresent(in: "books") == ["2026-01": 100])
        var dumped: [InspectedRecord] = []
        try inspector.forEachRecord(in: "books", index: "year", from: "1950", to: "1952") {
            dumped.append($0); return true
        }
        #expect(dumped.count == all.filter { (1950...1952).contains($0.year) }.count)
        let decoded = try dumped.map { try JSONDecoder().decode(Book.self, from: Data($0.json)) }
        #expect(decoded.map(\.year) == decoded.map(\.year).sorted())
        #expect(dumped.first?.identifier == decoded.first?.id.uuidString)
        var byID: [InspectedRecord] = []
        try inspector.forEachRecord(in: "books", from: all[5].id.uuidString, limit: 3) {
            byID.append($0); return true
        }
        #expect(byID.map(\.identifier) == all.map(\.id).sorted().drop { $0 < all[5].id }.prefix(3).map(\.uuidString))
        #expect(throws: FolioError.unknownDatastore("nope")) { try inspector.datastore("nope") }
        #expect(throws: FolioError.unknownIndex(datastore: "books", index: "nope")) {
            try inspector.forEachRecord(in: "books", index: "nope") { _ in true }
        }
        #expect(throws: FolioError.invalidValue(text: "soon", type: "Swift.Int")) {
            try inspector.forEachRecord(in: "books", index: "year", from: "soon") { _ in true }
        }
        #expect(inspector.verify().isClean)
    }
}
