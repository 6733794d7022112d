import Foundation
import FolioStorage
/// Observation: change streams, one instance, live queries. They work the same on a
/// read-only persistence in another process, which follows the writer's commits and
/// replays what changed (see ``Persistence/init(readingFrom:options:)``).
extension Datastore {
    /// Every change to this datastore committed after this call, or after `token` (to
    /// resume where an earlier observer stopped, in this process or another), in commit
    /// order, each after its commit is durable.
    ///
    /// At most `bufferLimit` events wait for a slow consumer; past that they are replaced
    /// by one ``DatastoreEvent/reload(token:)``: memory stays bounded, and nothing is
    /// dropped without saying so.
    ///
    /// ```swift
    /// for await event in try await books.observe() {
    ///     if case .change(let change) = event { print(change.kind, change.identifier) }
    /// }
    /// ```
    nonisolated(nonsending) public func observe(
        after token: ObservationToken? = nil,
        bufferLimit: Int = 1_000
    ) async throws(FolioError) -> DatastoreEvents<Format> {
        try await prepareForObservation(index: nil)
        let observer = EventsObserver(schema: schema, core: core, bufferLimit: bufferLimit, resumeAfter: token)
        return DatastoreEvents(
            lease: ObserverLease(hub: core.hub, observer: observer), channel: observer.channel, core: core)
    }

    /// The instance with `identifier`: its current value, then its value after each change;
    /// the sequence ends with `.deleted` when it is deleted (at once if it does not exist).
    ///
    /// At most `bufferLimit` values wait for a slow consumer; past that the waiting ones are
    /// dropped and the consumer continues from the newest. Values never go back in time.
    ///
    /// ```swift
    /// for await event in try await authors.observe(40) {
    ///     switch event {
    ///     case .value(let author): print(author.name)
    ///     case .deleted: print("deleted")
    ///     case .failure(let error): print(error)
    ///     }
    /// }
    /// ```
    nonisolated(nonsending) public func observe(
        _ identifier: Identifier, bufferLimit: Int = 100
    ) async throws(FolioError) -> InstanceEvents<Format> {
        try await prepareForObservation(index: nil)
        let key = identifier.keyBytes
        let observer = InstanceObserver(schema: schema, core: core, identifier: key, bufferLimit: bufferLimit)
        return InstanceEvents(lease: ObserverLease(hub: core.hub, observer: observer), channel: observer.channel)
    }

    /// A live query over every instance, in identifier order.
    nonisolated(nonsending) public func liveQuery(
        _ all: UnboundedRange, order: RangeOrder = .ascending,
        limit: Int? = nil
    ) async throws(FolioError) -> LiveResults<Format> {
        try await live(index: nil, range: .all, order: order, limit: limit)
    }

    /// A live query over a range of identifiers.
    nonisolated(nonsending) public func liveQuery(
        _ range: some IndexRange<Identifier>, order: RangeOrder = .ascending,
        limit: Int? = nil
    ) async throws(FolioError) -> LiveResults<Format> {
        try await live(index: nil, range: KeyRange.entries(in: range, suffixed: false), order: order, limit: limit)
    }

    /// A live query over the instances with one value of a one-to-many or many-to-many index.
    nonisolated(nonsending) public func liveQuery<I: MultiValueIndexDeclaration>(
        _ value: I.Value, from index: KeyPath<Format, I>,
        order: RangeOrder = .ascending, limit: Int? = nil
    )
        async throws(FolioError) -> LiveResults<Format> where I.Instance == Instance
    {
        try await live(
            index: schema.index(index), range: KeyRange.entries(of: value, suffixed: true), order: order, limit: limit)
    }

    /// A live query over the instance (at most one) with one value of a one-to-one index:
    /// the live form of `load(_:from:)` on the same index, taking the same value.
    nonisolated(nonsending) public func liveQuery<Value>(
        _ value: Value, from index: KeyPath<Format, OneToOneIndex<Instance, Value>>
    )
        async throws(FolioError) -> LiveResults<Format>
    {
        let declared = schema.index(index)
        return try await live(
            index: declared, range: KeyRange.entries(of: value, suffixed: declared.suffixedRanges), order: .ascending,
            limit: nil)
    }

    /// A live query over a range of values of an index, in index order.
    ///
    /// ```swift
    /// let shelf = try await books.liveQuery("a"..<"b", from: \.title)
    /// ```
    nonisolated(nonsending) public func liveQuery<I: ValueIndexDeclaration>(
        _ range: some IndexRange<I.Value>, from index: KeyPath<Format, I>,
        order: RangeOrder = .ascending, limit: Int? = nil
    )
        async throws(FolioError) -> LiveResults<Format> where I.Instance == Instance
    {
        let declared = schema.index(index)
        return try await live(
            index: declared, range: KeyRange.entries(in: range, suffixed: declared.suffixedRanges), order: order,
            limit: limit
        )
    }

    /// A live query over a predicate: the instances matching it, sorted by `sortBy` (ties,
    /// and no descriptors, in identifier order), at most `limit`, as `fetch(where:sortBy:limit:)`
    /// returns them, then again after each commit that changes them. Maintained from each
    /// commit's changed records, evaluated against the predicate, not by re-running the query.
    ///
    /// ```swift
    /// let live = try await books.liveQuery(where: #Predicate { $0.year >= 2020 }, sortBy: [SortDescriptor(\.title)])
    /// for try await recent in live {
    ///     print(recent.map(\.title))  // the results now, then after each commit that changes them
    /// }
    /// ```
    nonisolated(nonsending) public func liveQuery(
        where predicate: Predicate<Instance>, sortBy: [SortDescriptor<Instance>] = [],
        limit: Int? = nil
    ) async throws(FolioError) -> LiveResults<Format> {
        _ = try ResultWindow(limit: limit)
        try await prepareForObservation(index: nil)
        let (usable, gaps) = try await withRead { (source, usable) throws(FolioError) -> (Set<String>?, IndexGaps) in
            (usable, try indexGaps(in: source, usable: usable))
        }
        let observer = PredicateQueryObserver(
            schema: schema, core: core, predicate: predicate, sortBy: sortBy, limit: limit,
            usable: usable, gaps: gaps)
        return LiveResults(lease: ObserverLease(hub: core.hub, observer: observer), channel: observer.channel)
    }

    nonisolated(nonsending) private func live(
        index: SchemaIndex<Instance>?, range: KeyRange, order: RangeOrder,
        limit: Int?
    ) async throws(FolioError) -> LiveResults<Format> {
        _ = try ResultWindow(limit: limit)
        try await prepareForObservation(index: index)
        let observer = LiveQueryObserver(
            schema: schema, core: core, index: index, range: range, order: order, limit: limit)
        return LiveResults(lease: ObserverLease(hub: core.hub, observer: observer), channel: observer.channel)
    }

    /// The datastore must be prepared (indexes built) before observers read it; a read-only
    /// persistence must have the index built by the writer.
    nonisolated(nonsending) private func prepareForObservation(index: SchemaIndex<Instance>?) async throws(FolioError) {
        let availability = try await prepare(in: nil)
        if let index, case .fromCatalog = availability {
            let view = try FolioError.wrap { () throws(StorageError) in try core.store.readNewest() }
            try require(index, in: try usableIndexes(in: .view(view)))
        }
    }
}
