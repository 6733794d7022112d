// Many changes to one tree in one call: the engine half of batch updates and deletes.

/// What ``WriteTransaction/apply(_:to:resolvingPrevious:)`` found under each key it
/// changed, in the order of the changes.
package struct BatchOutcome: Sendable {
    /// Whether each key was in the tree before its change.
    package var existed: [Bool]
    /// Each key's previous value (nil where it was absent), when asked for; else empty.
    package var previous: [[UInt8]?]
}

extension WriteTransaction {
    /// Applies a batch of changes to `tree` (creating it if a put needs it): each change
    /// puts its value under its key, or removes the key when the value is nil. Keys must
    /// be strictly ascending (sorted, each at most once).
    ///
    /// The result, the change log, the statement's undo log, the counts and the spill
    /// accounting are exactly those of the same puts and removes made one by one in key
    /// order; the tree is walked once (TreeEditor+Batch.swift), so that neighbouring keys
    /// share one descent and one copy of their leaf.
    package func apply(
        _ changes: [(key: [UInt8], value: [UInt8]?)], to tree: String, resolvingPrevious: Bool = false
    ) throws(StorageError) -> BatchOutcome {
        try Self.validateBatch(changes, tree: tree)
        var outcome = BatchOutcome(existed: [], previous: [])
        outcome.existed.reserveCapacity(changes.count)
        if resolvingPrevious { outcome.previous.reserveCapacity(changes.count) }
        try outsideOtherStatements { () throws(StorageError) in
            var start = 0
            while start < changes.count {
                start = try applyChunk(changes, from: start, to: tree, resolvingPrevious: resolvingPrevious, &outcome)
            }
        }
        return outcome
    }

    /// Applies the changes from `start` on until they add up to the spill budget (so a
    /// batch spills where the same changes made one by one would), then spills if due;
    /// returns where the next chunk starts.
    private func applyChunk(
        _ changes: [(key: [UInt8], value: [UInt8]?)], from start: Int, to tree: String, resolvingPrevious: Bool,
        _ outcome: inout BatchOutcome
    ) throws(StorageError) -> Int {
        try withContents { (contents) throws(StorageError) -> Int in
            let budget = store.options.transactionSpillBytes.map { max(0, $0 - contents.spill.residentBytes) }
            var end = start, bytes = 0
            var keys: [[UInt8]] = [], values: [LeafValue?] = []
            // At least one change per chunk, so a spent budget still makes progress.
            while end < changes.count, end == start || budget.map({ bytes < $0 }) ?? true {
                let (key, value) = changes[end]
                let stored = value.map {
                    $0.count > StorageLimits.inlineValueLimit ? LeafValue.pendingOverflow($0) : .inline($0[...])
                }
                keys.append(key)
                values.append(stored)
                bytes += SpillState.resident(keys: 1, bytes: key.count + (stored?.byteCount ?? 0))
                end += 1
            }
            let state = try self.tree(tree, in: contents)
            let editor = self.editor(contents)
            contents.statement?.touch(state)
            let previous = try edit(contents, state) { () throws(StorageError) in
                try editor.apply(keys, values, in: state)
            }
            var applied = 0, appliedKeys = 0
            for index in keys.indices {
                let key = keys[index], old = previous[index]
                if let value = values[index] {
                    applied += key.count + value.byteCount
                    appliedKeys += 1
                    contents.statement?.log(.put(state, key: key, previous: old))
                    state.exists = true
                    state.isModified = true
                    if let old { editor.release(old, in: state) } else { state.count += 1 }
                    state.recordChange(key, existed: old != nil, existsNow: true)
                } else if let old {
                    applied += key.count
                    appliedKeys += 1
                    contents.statement?.log(.remove(state, key: key, removed: old))
                    editor.release(old, in: state)
                    state.count -= 1
                    state.isModified = true
                    state.recordChange(key, existed: true, existsNow: false)
                }
                outcome.existed.append(old != nil)
                if resolvingPrevious {
                    outcome.previous.append(
                        try old.map { (value) throws(StorageError) in Array(try base.reader.resolve(value)) })
                }
            }
            if contents.mayCompactChanges { state.compactChangesIfLarge() }
            try spillIfOverBudget(contents, tree: state, keys: appliedKeys, bytes: applied)
            return end
        }
    }

    /// Refuses a batch the per-key calls would refuse (a bad tree name, an oversized key
    /// or value), and one whose keys are not strictly ascending, before changing anything.
    private static func validateBatch(
        _ changes: [(key: [UInt8], value: [UInt8]?)], tree: String
    ) throws(StorageError) {
        try validate(treeName: tree)
        for index in changes.indices {
            let (key, value) = changes[index]
            guard key.count <= StorageLimits.maximumKeyLength else {
                throw .keyTooLarge(length: key.count, maximum: StorageLimits.maximumKeyLength)
            }
            if let value, value.count > StorageLimits.maximumValueLength {
                throw .valueTooLarge(length: value.count, maximum: StorageLimits.maximumValueLength)
            }
            guard index == 0 || ByteOrder.compare(changes[index - 1].key, key) < 0 else {
                throw .invalidKey(reason: "the keys of a batch must be strictly ascending (sorted, each once)")
            }
        }
    }
}
