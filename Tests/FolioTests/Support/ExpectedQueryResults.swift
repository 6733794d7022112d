import Foundation

/// What a query must return, computed in memory: the items matching `predicate` (by
/// Foundation's own evaluation), sorted by `sortBy`, ties and no descriptors in identifier
/// order. The model the query model tests compare every plan with.
func expectedQueryResults<Item: Identifiable>(
    _ items: [Item], _ predicate: Predicate<Item>, _ sortBy: [SortDescriptor<Item>]
) throws -> [Item] where Item.ID: Comparable {
    let matching = try items.filter { try predicate.evaluate($0) }.sorted { $0.id < $1.id }
    guard !sortBy.isEmpty else { return matching }
    return matching.enumerated().sorted { a, b in
        for descriptor in sortBy {
            switch descriptor.compare(a.element, b.element) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: continue
            }
        }
        return a.offset < b.offset
    }.map(\.element)
}
