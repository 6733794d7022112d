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

    /// The new instances of `added[positions]` (`delta.added(index: index, ...)`), decoded
    /// once for every live query of the commit; a missing record is left out.
    func decodeAdded(
        _ positions: Range<Int>, index: String?, in delta: CommitDelta, cache: DecodedChanges<Format>,
        added: ChangedEntries, core: PersistenceCore
    ) -> (run: DecodedRun<Format.Instance>, instances: Result<[Format.Instance], FolioError>) {
        let run: DecodedRun<Format.Instance>
        if let known = cache.added[index] {
            run = known
        } else {
            run = DecodedRun(count: added.count)
            cache.added[index] = run
        }
        let instances = run.instances(positions) { position in
            decodeNew(added.identifiers[position], in: delta, cache: cache, core: core)
        }
        return (run, instances)
    }

    func identifier(from key: [UInt8]) -> Format.Identifier? {
        var decoder = KeyDecoder(key)
        return try? decoder.decode(Format.Identifier.self)
    }
}
