import FolioStorage

// Reads through the record cache (RecordCache.swift). Point reads (by identifier, and the
// record an index entry refers to) fill it; scans only read it, so one scan of a large
// datastore does not evict the working set of point reads. Reads of a write transaction
// or of a transaction's snapshot pass it by: they must see the transaction's own writes.

extension ReadSource {
    /// The generation the record cache may serve this read from: a read view's. Nil for a
    /// write transaction and its snapshots, and for a view of a past generation
    /// (`read(at:)`): the cache holds what it learned of the newest generations, and a past
    /// one's read would make it catch up to a generation older than the newest and keep
    /// values of it as current (Docs/Cache.md §7.1).
    var cacheGeneration: UInt64? {
        if case .view(let view) = self, !view.isPast { return view.generation }
        return nil
    }
}

extension DatastoreSchema {
    /// The persistence's record cache, if it has one and this datastore's instances may be
    /// cached: not instances of class type, which callers may mutate (every read must
    /// return a fresh object, as without a cache).
    func recordCache(_ core: PersistenceCore) -> RecordCache? {
        cachesInstances ? core.records : nil
    }

    /// The cached instance of `identifier` for a read of `generation`, if any.
    func cached(_ identifier: [UInt8], generation: UInt64, in cache: RecordCache) -> Format.Instance? {
        cache.instance(identifier, in: recordsTree, generation: generation, format: ObjectIdentifier(Format.self))
    }

    /// The record `identifier` as `source` sees it, from the record cache when it holds it
    /// for the source's generation, else read, decoded and kept in the cache.
    func read(
        _ identifier: [UInt8], from source: ReadSource, core: PersistenceCore
    ) throws(FolioError) -> Format.Instance? {
        let cache = recordCache(core), generation = source.cacheGeneration
        if let cache, let generation, let cached = cached(identifier, generation: generation, in: cache) {
            return cached
        }
        guard
            let bytes = try FolioError.wrap({ () throws(StorageError) in
                try source.getInPlace(identifier, in: recordsTree)
            })
        else {
            return nil
        }
        let instance = try decode(bytes, identifier: identifier, core: core)
        if let cache, let generation {
            cache.insert(
                instance, identifier, in: recordsTree, generation: generation, bytes: bytes.count,
                format: ObjectIdentifier(Format.self))
        }
        return instance
    }

    /// A record a scan has read (`bytes`, stored under `identifier`), decoded, or the cached
    /// instance when the cache holds it for the source's generation. Does not fill the cache.
    func decode(
        _ bytes: ArraySlice<UInt8>, identifier: [UInt8], source: ReadSource, core: PersistenceCore
    ) throws(FolioError) -> Format.Instance {
        try decode(bytes, identifier: identifier[...], cacheKey: { identifier }, source: source, core: core)
    }

    /// ``decode(_:identifier:source:core:)`` of a record read in place: the identifier is
    /// copied out of its page only to look in the record cache, when there is one.
    func decode(
        _ bytes: ArraySlice<UInt8>, identifier: ArraySlice<UInt8>, source: ReadSource, core: PersistenceCore
    ) throws(FolioError) -> Format.Instance {
        try decode(bytes, identifier: identifier, cacheKey: { Array(identifier) }, source: source, core: core)
    }

    private func decode(
        _ bytes: ArraySlice<UInt8>, identifier: ArraySlice<UInt8>, cacheKey: () -> [UInt8], source: ReadSource,
        core: PersistenceCore
    ) throws(FolioError) -> Format.Instance {
        if let cache = recordCache(core), let generation = source.cacheGeneration,
            let cached = cached(cacheKey(), generation: generation, in: cache)
        {
            return cached
        }
        return try decode(bytes, identifier: identifier, core: core)
    }
}
