import FolioStorage

// Decoding a commit's changed records for observers, once per commit through the
// delta's shared caches (the helpers the three observers call).

/// Decoding of changed records for observers, shared through the commit delta.
extension DatastoreSchema {
    func decodeOld(
        _ identifier: [UInt8], in delta: CommitDelta, core: PersistenceCore
    ) -> Result<Format.Instance, FolioError>? {
        let cache = delta.decoded(Format.self), key = HashedKey(identifier)
        if let known = cache.old[key] { return known }
        let result = delta.oldRecord(identifier).map { record in
            Result { () throws(FolioError) in try decode(record, identifier: identifier, core: core) }
        }
        cache.old[key] = .some(result)
        return result
    }

    func decodeNew(
        _ identifier: [UInt8], in delta: CommitDelta, core: PersistenceCore
    ) -> Result<Format.Instance, FolioError>? {
        decodeNew(identifier, in: delta, cache: delta.decoded(Format.self), core: core)
    }

    func decodeNew(
        _ identifier: [UInt8], in delta: CommitDelta, cache: DecodedChanges<Format>,
        core: PersistenceCore
    ) -> Result<Format.Instance, FolioError>? {
        let key = HashedKey(identifier)
        if let known = cache.new[key] { return known }
        let result = delta.newRecord(identifier).map { record in
            Result { () throws(FolioError) in try decode(record, identifier: identifier, core: core) }
        }
        cache.new[key] = .some(result)
        return result
    }

    /// The new instance of `delta.added(index:)[position]`, decoded once for every live
    /// query of the commit (a position lookup, no hashing).
    func decodeAdded(
        at position: Int, index: String, in delta: CommitDelta, cache: DecodedChanges<Format>,
        added: [(entryKey: [UInt8], identifier: [UInt8])], core: PersistenceCore
    ) -> Result<Format.Instance, FolioError>? {
        if cache.added[index] == nil { cache.added[index] = Array(repeating: nil, count: added.count) }
        if let known = cache.added[index]![position] { return known }
        let result = decodeNew(added[position].identifier, in: delta, cache: cache, core: core)
        cache.added[index]![position] = .some(result)
        return result
    }

    func identifier(from key: [UInt8]) -> Format.Identifier? {
        var decoder = KeyDecoder(key)
        return try? decoder.decode(Format.Identifier.self)
    }
}
