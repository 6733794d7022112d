import FolioStorage

// Index plans as a merge join. A plan that reads an index first collects the identifiers
// its entries name (index entries only: nothing is decoded), orders them by key bytes and
// drops adjacent duplicates (a union, a many-to-many index), then reads the records in that
// order through one forward cursor over the records tree (Cursor+OrderedLookup.swift):
// records that are neighbours in the tree cost one descent per leaf, not one per record,
// and the results come in identifier order, which is a query's order without sort
// descriptors, so they stream with no sort step. Covering indexes hold the record in the
// entry: no records-tree read at all.

extension QueryExecution {
    /// The entries of a merge-join plan in identifier order, without duplicates. One
    /// equality range (of an index value, or of a composite index's every component) is in
    /// identifier order already: its entries are the value's key then the identifier's, so
    /// it streams as it is read. Any other plan's identifiers are collected and sorted.
    func mergedEntries(
        of plan: QueryPlanner<Format>.Plan, source: ReadSource
    ) throws(FolioError) -> () throws(FolioError) -> Named? {
        let next = entries(of: plan, source: source, deduplicates: false)
        if plan.parts.count == 1, plan.parts[0].range.kind == .equal {
            var last: [UInt8]?
            return { () throws(FolioError) -> Named? in
                while let named = try next() {
                    // Sorted, so a repeat is the one just returned.
                    if let last, last == named.identifier { continue }
                    last = named.identifier
                    return named
                }
                return nil
            }
        }
        var collected: [Named] = []
        // The identifiers apart, in an array of a concrete type: the sort compares them
        // about 2 n log n times, and reading one out of an entry of the generic `Named`
        // copies the whole entry (its index's description) through its type's metadata.
        var identifiers: [[UInt8]] = []
        while let named = try next() {
            collected.append(named)
            identifiers.append(named.identifier)
        }
        // Sorted through a permutation: an entry (with its index's description, perhaps a
        // record) is large to move, and a sort moves each several times.
        var order = Array(collected.indices)
        identifiers.withUnsafeBufferPointer { identifiers in
            order.sort { KeyBytes.compare(identifiers[$0], identifiers[$1]) < 0 }
        }
        var position = 0
        return { () throws(FolioError) -> Named? in
            while position < order.count {
                let at = order[position]
                position += 1
                // Sorted: the duplicates of an identifier are next to it.
                if position > 1, identifiers[order[position - 2]] == identifiers[at] { continue }
                return collected[at]
            }
            return nil
        }
    }
}

extension DatastoreSchema {
    /// The record an index entry refers to, as ``read(_:from:core:)`` reads it (from the
    /// record cache when it holds it for the source's generation, else read, decoded and
    /// kept in the cache), with the records tree read through `records`: one forward cursor
    /// for a whole query, made at the first read, so identifiers asked in key order cost one
    /// descent per leaf. A missing record is a corrupt index.
    func read(
        _ identifier: [UInt8], referencedBy index: SchemaIndex<Format.Instance>?, through records: inout Cursor?,
        source: ReadSource, core: PersistenceCore
    ) throws(FolioError) -> Format.Instance {
        let cache = recordCache(core), generation = source.cacheGeneration
        if let cache, let generation, let cached = cached(identifier, generation: generation, in: cache) {
            return cached
        }
        let bytes = try FolioError.wrap { () throws(StorageError) -> ArraySlice<UInt8>? in
            if records == nil { records = try source.cursor(in: recordsTree, range: .all, direction: .forward) }
            return try records!.value(at: identifier)
        }
        guard let bytes else {
            throw .corruptRecord(
                datastore: key,
                detail:
                    "index \(index?.name ?? "?") refers to \(describe(identifierKey: identifier)), which does not exist"
            )
        }
        let instance = try decode(bytes, identifier: identifier, core: core)
        if let cache, let generation {
            cache.insert(
                instance, identifier, in: recordsTree, generation: generation, bytes: bytes.count,
                format: ObjectIdentifier(Format.self))
        }
        return instance
    }
}
