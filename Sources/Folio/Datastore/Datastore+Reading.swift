import FolioStorage
/// Reads. Each runs in the enclosing transaction or snapshot if there is one, else in a
/// snapshot of its own: a read never waits for a writer and sees one committed state.
extension Datastore {
    /// The type of the datastore's records.
    public typealias Instance = Format.Instance
    /// The type of the records' identifiers.
    public typealias Identifier = Format.Identifier

    // MARK: By identifier

    /// The instance with `identifier`, or nil: the fastest read (a record read before may
    /// come from the record cache without opening a snapshot).
    ///
    /// ```swift
    /// if let author = try await authors.load(40) {
    ///     print(author.name)
    /// }
    /// ```
    nonisolated(nonsending) public func load(_ identifier: Identifier) async throws(FolioError) -> Instance? {
        let key = identifier.keyBytes
        if let cached = cachedNewest(key) { return cached }
        return try await withRead { (source, _) throws(FolioError) -> Instance? in
            try schema.read(key, from: source, core: core)
        }
    }

    /// The instances whose identifiers lie in `range` (`a..<b`, `a...b`, `a...`, `..<b`, `...b`).
    ///
    /// ```swift
    /// let firstTen = try await authors.load(1...10).collect()
    /// ```
    public func load(
        _ range: some IndexRange<Identifier>, order: RangeOrder = .ascending, limit: Int? = nil
    ) -> Records<Instance> {
        records(through: nil, range: KeyRange.entries(in: range, suffixed: false), order: order, limit: limit)
    }

    /// Every instance, in identifier order: `load(...)`.
    ///
    /// ```swift
    /// let lastFive = try await authors.load(..., order: .descending, limit: 5).collect()
    /// ```
    public func load(_ all: UnboundedRange, order: RangeOrder = .ascending, limit: Int? = nil) -> Records<Instance> {
        records(through: nil, range: .all, order: order, limit: limit)
    }

    /// Number of instances. Reads no record.
    nonisolated(nonsending) public func count() async throws(FolioError) -> Int {
        try await withRead { (source, _) throws(FolioError) -> Int in
            Int(try FolioError.wrap { () throws(StorageError) in try source.count(in: schema.recordsTree) })
        }
    }

    /// Number of instances whose identifiers lie in `range`.
    nonisolated(nonsending) public func count(_ range: some IndexRange<Identifier>) async throws(FolioError) -> Int {
        try await countKeys(in: schema.recordsTree, index: nil, range: KeyRange.entries(in: range, suffixed: false))
    }

    // MARK: Through an index

    /// The instances whose value in a one-to-many or many-to-many index is `value`, in
    /// identifier order.
    ///
    /// ```swift
    /// for try await book in books.load(authorID, from: \.authors) {
    ///     print(book.title)
    /// }
    /// ```
    public func load<I: MultiValueIndexDeclaration>(
        _ value: I.Value, from index: KeyPath<Format, I>, order: RangeOrder = .ascending,
        limit: Int? = nil
    ) -> Records<Instance> where I.Instance == Instance {
        records(
            through: schema.index(index), range: KeyRange.entries(of: value, suffixed: true), order: order, limit: limit
        )
    }

    /// The instance whose value in a one-to-one index is `value`, or nil.
    ///
    /// ```swift
    /// let book = try await books.load("978-1-0001234-4", from: \.isbn)
    /// ```
    nonisolated(nonsending) public func load<Value>(
        _ value: Value, from index: KeyPath<Format, OneToOneIndex<Instance, Value>>
    ) async throws(FolioError) -> Instance? {
        let declared = schema.index(index)
        let key = value.keyBytes
        return try await withRead { (source, usable) throws(FolioError) -> Instance? in
            try require(declared, in: usable)
            guard
                let entry = try FolioError.wrap({ () throws(StorageError) in
                    try source.getInPlace(key, in: declared.tree)
                })
            else { return nil }
            return try instance(fromEntry: entry, of: declared, source: source)
        }
    }

    /// The instances whose value in an index lies in `range`, in index order (ties in
    /// identifier order). Through a many-to-many index an instance appears once per
    /// matching element.
    ///
    /// Index order is key order (Docs/Keys.md): a `String` index orders by the Unicode
    /// scalars of the strings' normal forms, which is Swift's `<` for strings in normal form;
    /// a stored string that is not is placed, and bounded, by its normal form (Swift's `<`
    /// takes shortcuts there, Keys.md §9.1). A `#Predicate` over the same range answers by
    /// Swift's `<` instead (``fetch(where:sortBy:limit:offset:)``).
    ///
    /// ```swift
    /// let nineties = try await books.load(1990..<2000, from: \.year, order: .descending).collect()
    /// ```
    public func load<I: ValueIndexDeclaration>(
        _ range: some IndexRange<I.Value>, from index: KeyPath<Format, I>,
        order: RangeOrder = .ascending, limit: Int? = nil
    ) -> Records<Instance>
    where I.Instance == Instance {
        let declared = schema.index(index)
        return records(
            through: declared, range: KeyRange.entries(in: range, suffixed: declared.suffixedRanges), order: order,
            limit: limit)
    }

    /// Every instance in the order of an index: `load(..., from: \.title)`.
    ///
    /// ```swift
    /// for try await book in books.load(..., from: \.title, limit: 50) {
    ///     print(book.title)
    /// }
    /// ```
    public func load<I: ValueIndexDeclaration>(
        _ all: UnboundedRange, from index: KeyPath<Format, I>, order: RangeOrder = .ascending,
        limit: Int? = nil
    ) -> Records<Instance> where I.Instance == Instance {
        records(through: schema.index(index), range: .all, order: order, limit: limit)
    }

    /// Number of index entries with `value` (for a many-to-many index, of instances holding it).
    nonisolated(nonsending) public func count<I: ValueIndexDeclaration>(
        _ value: I.Value, from index: KeyPath<Format, I>
    ) async throws(FolioError) -> Int
    where I.Instance == Instance {
        let declared = schema.index(index)
        return try await countKeys(
            in: declared.tree, index: declared, range: KeyRange.entries(of: value, suffixed: declared.suffixedRanges))
    }

    /// Number of index entries whose value lies in `range`.
    nonisolated(nonsending) public func count<I: ValueIndexDeclaration>(
        _ range: some IndexRange<I.Value>, from index: KeyPath<Format, I>
    ) async throws(FolioError) -> Int
    where I.Instance == Instance {
        let declared = schema.index(index)
        return try await countKeys(
            in: declared.tree, index: declared, range: KeyRange.entries(in: range, suffixed: declared.suffixedRanges))
    }

    // MARK: Machinery

    func records(
        through index: SchemaIndex<Instance>?, range: KeyRange, order: RangeOrder, limit: Int?
    ) -> Records<Instance> {
        let datastore = self
        return Records(limit: limit) { () async throws(FolioError) -> RecordStream<Instance> in
            let (source, usable) = try await datastore.readSource()
            if let index { try datastore.require(index, in: usable) }
            let tree = index?.tree ?? datastore.schema.recordsTree
            let cursor = try FolioError.wrap { () throws(StorageError) in
                try source.cursor(in: tree, range: range, direction: order.direction)
            }
            return RecordStream(cursor: cursor) { (key, value) throws(FolioError) -> Instance in
                if let index { return try datastore.instance(fromEntry: value, of: index, source: source) }
                return try datastore.schema.decode(value, identifier: key, source: source, core: datastore.core)
            }
        }
    }

    /// The record `key` from the record cache, for a point read outside any transaction or
    /// snapshot, without opening a snapshot: the cached record as of the newest generation,
    /// which is what a read now would see. Safe without a view because an entry is valid for
    /// every generation from the one it was read in up to the cache's `known`, and `known` is
    /// never below the store's newest generation in a read-write persistence (every
    /// generation is this process's and reported before it is visible). Read-write
    /// persistences only, open stores only (a closed one returns nil, and the read's usual
    /// path throws `closed`); nil on a miss or before the datastore is prepared.
    func cachedNewest(_ key: [UInt8]) -> Instance? {
        guard let cache = schema.recordCache(core), !core.isReadOnly, TransactionContext.current(for: core) == nil
        else { return nil }
        // Other processes' commits first: the newest generation is the one they may have made.
        core.store.followIfRootFileChanged()
        guard schema.isKnownReady(in: core), let generation = core.store.openGeneration else { return nil }
        return schema.cached(key, generation: generation, in: cache)
    }

    /// The instance an index entry refers to (or holds, for a covering index).
    func instance(
        fromEntry entry: ArraySlice<UInt8>, of index: SchemaIndex<Instance>, source: ReadSource
    ) throws(FolioError) -> Instance {
        try schema.instance(fromEntry: entry, of: index, source: source, core: core)
    }

    nonisolated(nonsending) func countKeys(
        in tree: String, index: SchemaIndex<Instance>?, range: KeyRange
    ) async throws(FolioError) -> Int {
        try await withRead { (source, usable) throws(FolioError) -> Int in
            if let index { try require(index, in: usable) }
            var cursor = try FolioError.wrap { () throws(StorageError) in
                try source.cursor(in: tree, range: range, direction: .forward)
            }
            var count = 0
            while try FolioError.wrap({ () throws(StorageError) in try cursor.nextKey() }) != nil { count += 1 }
            return count
        }
    }
}

extension DatastoreSchema {
    /// The instance an index entry refers to (or holds, for a covering index).
    func instance(
        fromEntry entry: ArraySlice<UInt8>, of index: SchemaIndex<Format.Instance>, source: ReadSource,
        core: PersistenceCore
    ) throws(FolioError) -> Format.Instance {
        guard let (identifier, record) = IndexEntry.decode(entry) else {
            throw .corruptRecord(datastore: key, detail: "an entry of index \(index.name) is malformed")
        }
        if let record { return try decode(record, identifier: identifier, source: source, core: core) }
        guard let instance = try read(identifier, from: source, core: core) else {
            throw .corruptRecord(
                datastore: key,
                detail: "index \(index.name) refers to \(describe(identifierKey: identifier)), which does not exist")
        }
        return instance
    }
}
