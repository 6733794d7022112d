import Testing
import Foundation
import Folio
import FolioTestSupport

/// Batch changes by predicate ("mark every unread message of a thread read"): one call,
/// one transaction, one commit for observers, indexes consistent, and the same result as
/// changing each matching record in memory.
@Suite struct BatchChangeTests {
    typealias Item = QueryModelTests.Item

    @Test func updateAndDeleteByPredicateMatchTheModelInOneCommitEach() async throws {
        let persistence = Persistence.inMemory()
        let items = persistence.datastore(for: QueryModelTests.ItemFormat.self)
        var rng = SplitMix64(seed: 5)
        var model: [Int: Item] = [:]
        try await persistence.perform {
            for id in 0..<300 {
                let item = QueryModelTests.item(id, &rng)
                try await items.persist(item)
                model[id] = item
            }
        }
        let events = try await items.observe()
        var iterator = events.makeAsyncIterator()

        // Move every item of group 3 with a red tag to group 20 (an indexed field).
        let updated = try await items.update(where: #Predicate { $0.group == 3 && $0.tags.contains("red") }) {
            $0.group = 20
        }
        var expectedIDs: Set<Int> = []
        for (id, item) in model where item.group == 3 && item.tags.contains("red") {
            model[id]!.group = 20
            expectedIDs.insert(id)
        }
        #expect(updated == expectedIDs.count && updated > 0)
        var tokens: Set<ObservationToken> = []
        var seen: Set<Int> = []
        for _ in 0..<updated {
            guard case .change(let change)? = await iterator.next() else { Issue.record("an event is missing"); return }
            #expect(change.kind == .updated && change.newValue?.group == 20)
            tokens.insert(change.token)
            seen.insert(change.identifier)
        }
        #expect(seen == expectedIDs)
        #expect(tokens.count == 1, "one commit for the whole batch")
        // The index agrees: group 20 holds exactly the moved items.
        #expect(Set(try await items.load(20, from: \.group).collect().map(\.id)) == expectedIDs)
        #expect(try await items.count(where: #Predicate { $0.group == 3 && $0.tags.contains("red") }) == 0)

        // Delete every item whose score is negative (an unindexed field).
        let deleted = try await items.delete(where: #Predicate { $0.score < 0 })
        let negative = model.values.filter { $0.score < 0 }.map(\.id)
        #expect(deleted == negative.count && deleted > 0)
        for id in negative { model[id] = nil }
        #expect(try await items.fetch().collect() == model.values.sorted { $0.id < $1.id })

        // Exact index plans delete from the index entries alone, without decoding a record:
        // a range of an index, and a many-to-many `contains` (an item with the tag twice is
        // one match). Every index must still agree with the records afterwards.
        let tagged = model.values.filter { $0.tags.contains("blue") }.map(\.id)
        #expect(try await items.explain(where: #Predicate { $0.tags.contains("blue") }).filters == false)
        #expect(try await items.delete(where: #Predicate { $0.tags.contains("blue") }) == tagged.count)
        for id in tagged { model[id] = nil }
        let high = model.values.filter { $0.group >= 9 }.map(\.id)
        #expect(try await items.count(where: #Predicate { $0.group >= 9 }) == high.count)
        #expect(try await items.delete(where: #Predicate { $0.group >= 9 }) == high.count && !high.isEmpty)
        for id in high { model[id] = nil }
        #expect(try await items.fetch().collect() == model.values.sorted { $0.id < $1.id })
        for group in 0..<12 {
            #expect(
                try await items.load(group, from: \.group).collect().map(\.id).sorted()
                    == model.values.filter { $0.group == group }.map(\.id).sorted())
        }
        #expect(try await items.load("blue", from: \.tags).collect().isEmpty)
        #expect(
            try await items.count(where: #Predicate { $0.tags.contains("red") })
                == model.values.filter { $0.tags.contains("red") }.count)

        // By a list of identifiers: those present are deleted, the others ignored.
        let some = Array(model.keys.sorted().prefix(5))
        #expect(try await items.delete(some + [10_000, 10_001]) == 5)
        #expect(try await items.count() == model.count - 5)
    }

    @Test func anUpdateThatChangesTheIdentifierChangesNothing() async throws {
        let persistence = Persistence.inMemory()
        let items = persistence.datastore(for: QueryModelTests.ItemFormat.self)
        var rng = SplitMix64(seed: 6)
        for id in 0..<10 { try await items.persist(QueryModelTests.item(id, &rng)) }
        let before = try await items.fetch().collect()
        await #expect(throws: FolioError.self) {
            try await items.update(where: #Predicate { $0.id < 5 }) { $0.id += 100 }
        }
        #expect(try await items.fetch().collect() == before, "the batch is one statement: nothing half-applied")
    }

    struct Note: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var shelf: Int
        var bin: Int
        var text: String
    }

    /// A covering index (its entries hold the record) beside a reference one.
    struct NoteFormat: DatastoreFormat {
        static let key = "notes"
        typealias Instance = Note
        let shelf = Index(\Note.shelf, storage: .covering)
        let bin = Index(\Note.bin)
        init() {}
    }

    /// An update that changes no indexed value leaves the reference entries as they are,
    /// but must still rewrite the covering entries, which hold the record.
    @Test func anUpdateOfAnUnindexedValueRewritesCoveringEntries() async throws {
        let persistence = Persistence.inMemory()
        let notes = persistence.datastore(for: NoteFormat.self)
        for id in 0..<30 { try await notes.persist(Note(id: id, shelf: id % 3, bin: id % 5, text: "old")) }
        #expect(try await notes.update(where: #Predicate { $0.id >= 10 }) { $0.text = "new" } == 20)
        let expected = (0..<30).map { Note(id: $0, shelf: $0 % 3, bin: $0 % 5, text: $0 >= 10 ? "new" : "old") }
        for shelf in 0..<3 {
            let read = try await notes.load(shelf, from: \.shelf).collect().sorted { $0.id < $1.id }
            #expect(read == expected.filter { $0.shelf == shelf }, "through the covering index")
        }
        for bin in 0..<5 {
            let read = try await notes.load(bin, from: \.bin).collect().sorted { $0.id < $1.id }
            #expect(read == expected.filter { $0.bin == bin }, "through the reference index")
        }
        #expect(try await notes.fetch().collect() == expected)
    }

    @Test func aBatchInsidePerformRollsBackWithIt() async throws {
        let persistence = Persistence.inMemory()
        let items = persistence.datastore(for: QueryModelTests.ItemFormat.self)
        var rng = SplitMix64(seed: 7)
        for id in 0..<20 { try await items.persist(QueryModelTests.item(id, &rng)) }
        struct Stop: Error {}
        await #expect(throws: Stop.self) {
            try await persistence.perform {
                try await items.delete(where: #Predicate { $0.id >= 0 })
                #expect(try await items.count() == 0)
                throw Stop()
            }
        }
        #expect(try await items.count() == 20)
    }
}
