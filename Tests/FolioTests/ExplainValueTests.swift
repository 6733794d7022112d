import Testing
import Foundation
import Folio

/// `explain` as values: the scans (index and condition), the indexes read, and the sort
/// step's keys, so a test checks just what it means to (the index a query uses) without
/// matching the text. Index plans without sort descriptors run as a merge join in
/// identifier order: no sort step.
@Suite struct ExplainValueTests {
    typealias Item = QueryModelTests.Item

    @Test func plansGiveTheirScansIndexesAndSortKeysAsValues() async throws {
        let persistence = Persistence.inMemory()
        let items = persistence.datastore(for: QueryModelTests.ItemFormat.self)
        try await items.persist(Item(id: 1, group: 1, name: "A", tags: [], score: 0, code: "c1", rating: nil))

        let byGroup = try await items.explain(
            where: #Predicate { $0.group >= 3 && $0.score < 7 }, sortBy: [SortDescriptor(\.name)], limit: 20)
        #expect(byGroup.indexes == ["group"])
        #expect(byGroup.scans == [QueryPlan.Scan(index: "group", condition: "group >= 3")])
        #expect(byGroup.sortKeys == [QueryPlan.SortKey(property: "name", descending: false)])

        let range = try await items.explain(where: #Predicate { (2..<5).contains($0.group) })
        #expect(range.indexes == ["group"])
        #expect(range.sort == nil && range.sortKeys == nil, "a merge join yields identifier order: \(range)")
        let descending = try await items.explain(
            where: #Predicate { (2..<5).contains($0.group) }, sortBy: [SortDescriptor(\.score, order: .reverse)])
        #expect(descending.sortKeys == [QueryPlan.SortKey(property: "score", descending: true)])

        let union = try await items.explain(where: #Predicate { $0.tags.contains("x") || $0.group == 4 })
        #expect(union.indexes == ["tags", "group"])
        #expect(
            union.scans == [
                QueryPlan.Scan(index: "tags", condition: "tags contains x"),
                QueryPlan.Scan(index: "group", condition: "group == 4"),
            ])

        let wholeIndex = try await items.explain(sortBy: [SortDescriptor(\.group)])
        #expect(wholeIndex.scans == [QueryPlan.Scan(index: "group", condition: "every value")])
        #expect(wholeIndex.indexes == ["group"] && wholeIndex.sortKeys == nil)

        let identifier = try await items.explain(where: #Predicate { $0.id == 3 })
        #expect(identifier.scans == [QueryPlan.Scan(index: nil, condition: "id == 3")])
        #expect(identifier.indexes.isEmpty)

        let everyRecord = try await items.explain(where: #Predicate { $0.score > 1 })
        #expect(everyRecord.scans.isEmpty && everyRecord.indexes.isEmpty && everyRecord.sortKeys == nil)
        let sortedScan = try await items.explain(where: #Predicate { $0.score > 1 }, sortBy: [SortDescriptor(\.name)])
        #expect(sortedScan.sortKeys == [QueryPlan.SortKey(property: "name", descending: false)])
    }
}
