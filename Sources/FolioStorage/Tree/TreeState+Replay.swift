// A tree written blind, replayed at the commit onto the tip's newer version of it
// (Docs/Architecture.md invariant 7).
extension TreeState {
    /// This tree's blind writes (``blindKeys``) made again onto `tip`'s version of the tree,
    /// as a new state the commit appends instead of this one: each key gets the value it
    /// has in this transaction's tree (absent: removed). The writes are the same whatever
    /// the tree held, since nothing of it was read; the keys other commits changed keep
    /// their values unless this transaction wrote them too (it commits after them, so it
    /// wins). The change record lists what the replay changed in the tip's tree, so
    /// observers and caches see exactly the difference between the two generations.
    ///
    /// `reader` reads this transaction's tree (its base's; the tip's file is the same).
    /// Caller holds the store's `writeSection`, so the tip does not move.
    func replayed(onto tip: CommittedRoot, reading reader: TreeReader) throws(StorageError) -> TreeState {
        let replay = TreeState(name: name, descriptor: try tip.descriptor(of: name))
        replay.changeRecordKeyLimit = changeRecordKeyLimit
        let editor = TreeEditor(reader: tip.reader)
        let mine = exists ? root : nil
        for key in blindKeys {
            if let value = try reader.get(root: mine, key: key) {
                let previous = try editor.put(key, try Self.unshared(value, reader: reader), in: replay)
                replay.exists = true
                replay.isModified = true
                if let previous {
                    editor.release(previous, in: replay)
                } else {
                    replay.count += 1
                }
                replay.recordChange(key, existed: previous != nil, existsNow: true)
            } else if let removed = try editor.remove(key, in: replay) {
                editor.release(removed, in: replay)
                replay.count -= 1
                replay.isModified = true
                replay.recordChange(key, existed: true, existsNow: false)
            }
        }
        return replay
    }

    /// A value of this transaction's tree as the replayed tree stores it: a value in an
    /// overflow page already written is copied (the page belongs to the tree replaced).
    private static func unshared(_ value: LeafValue, reader: TreeReader) throws(StorageError) -> LeafValue {
        switch value {
        case .inline, .pendingOverflow: return value
        case .overflow: return .pendingOverflow(Array(try reader.resolve(value)))
        }
    }
}
