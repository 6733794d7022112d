// The history a store declares it keeps: stored in the store, in the tree `folio/retention`
// (Docs/Format.md §17.1), so that every writer process removes replaced files by the same
// rule. A rule held in each process's options would let the process declaring the least
// history remove what the others keep.

/// How much of its past a store keeps beyond what compaction leaves (every generation since
/// the last compaction, and the replaced file for the grace period of ``SnapshotRetention``).
///
/// A past generation is kept while any rule keeps it: it is one of the newest
/// ``generations``, it was committed within ``duration``, it is in the newest replaced
/// files that fit in ``bytes``, or a checkpoint names it. Keeping a generation keeps the
/// snapshot file that holds it, so whole files are kept: a little more than declared.
package struct RetainedHistory: Sendable, Equatable {
    /// Keep the newest this many generations (nil: no such rule).
    package var generations: UInt64?
    /// Keep the generations committed within this many microseconds (nil: no such rule).
    package var duration: UInt64?
    /// Keep replaced files, newest first, while their bytes add up to at most this (nil: no
    /// such rule).
    package var bytes: UInt64?
    /// The checkpoints: generations kept until released.
    package var checkpoints: [StoredCheckpoint]

    package init(
        generations: UInt64? = nil, duration: UInt64? = nil, bytes: UInt64? = nil,
        checkpoints: [StoredCheckpoint] = []
    ) {
        self.generations = generations
        self.duration = duration
        self.bytes = bytes
        self.checkpoints = checkpoints
    }

    /// Whether any rule keeps past generations.
    package var keepsAnything: Bool {
        generations != nil || duration != nil || bytes != nil || !checkpoints.isEmpty
    }
}

/// A named generation kept until released.
package struct StoredCheckpoint: Sendable, Equatable {
    /// The name it was made with.
    package var name: String
    /// The generation it keeps.
    package var generation: UInt64
    /// When that generation was committed, in microseconds since 1970.
    package var timestamp: UInt64
    /// Where that generation's commit page is: a past read finds it there when the commit
    /// chain no longer reaches it (the files between it and the newest were let go).
    package var location: CommitLocation

    package init(name: String, generation: UInt64, timestamp: UInt64, location: CommitLocation) {
        self.name = name
        self.generation = generation
        self.timestamp = timestamp
        self.location = location
    }
}

/// The tree that declares a store's history (Docs/Format.md §17.1):
///
///     policy              24 bytes: u64 LE generations, u64 LE duration in µs,
///                         u64 LE bytes; 0 in a field: no such rule
///     checkpoint/<name>   36 bytes: u64 LE generation, u64 LE its commit time in µs, and
///                         its commit page: u64 LE file number, u64 LE offset, u32 LE length
package enum RetentionLayout {
    package static let tree = "folio/retention"
    package static let policy = Array("policy".utf8)
    package static let checkpointPrefix = Array("checkpoint/".utf8)

    /// The key of checkpoint `name`.
    package static func checkpointKey(_ name: String) -> [UInt8] { checkpointPrefix + Array(name.utf8) }

    /// The value of the `policy` key for `history`'s rules.
    package static func encodePolicy(_ history: RetainedHistory) -> [UInt8] {
        var writer = ByteWriter(capacity: 24)
        for rule in [history.generations, history.duration, history.bytes] { writer.append(rule ?? 0) }
        return writer.bytes
    }

    /// The value of a checkpoint's key.
    package static func encodeCheckpoint(_ checkpoint: StoredCheckpoint) -> [UInt8] {
        var writer = ByteWriter(capacity: 36)
        writer.append(checkpoint.generation)
        writer.append(checkpoint.timestamp)
        writer.append(checkpoint.location.fileNumber)
        writer.append(checkpoint.location.address.offset)
        writer.append(checkpoint.location.address.length)
        return writer.bytes
    }

    /// The history `view`'s generation declares (none if the tree is absent). Keys this
    /// build does not know are passed by (a later build may add some; a checker reports
    /// them).
    /// - Throws: `StorageError.corruption` for a known key whose value is malformed.
    package static func read(in view: ReadView) throws(StorageError) -> RetainedHistory {
        var history = RetainedHistory()
        var entries = try view.cursor(in: tree)
        while let entry = try entries.next() {
            guard entry.key == policy || entry.key.starts(with: checkpointPrefix) else { continue }
            if let problem = problem(key: entry.key, value: entry.value) {
                throw .corruption(
                    Corruption(
                        file: view.root.file.path, offset: 0,
                        detail: "tree \(tree), key \"\(String(decoding: entry.key, as: UTF8.self))\": \(problem)"))
            }
            // Lengths checked above: every read below succeeds.
            var reader = ByteReader(entry.value)
            let rule = { (reader: inout ByteReader) -> UInt64? in reader.readUInt64().flatMap { $0 == 0 ? nil : $0 } }
            if entry.key == policy {
                (history.generations, history.duration, history.bytes) = (rule(&reader), rule(&reader), rule(&reader))
            } else {
                let name = String(decoding: entry.key.dropFirst(checkpointPrefix.count), as: UTF8.self)
                let (generation, timestamp) = (reader.readUInt64() ?? 0, reader.readUInt64() ?? 0)
                let file = reader.readUInt64() ?? 0
                let address = PageAddress(offset: reader.readUInt64() ?? 0, length: reader.readUInt32() ?? 0)
                history.checkpoints.append(
                    StoredCheckpoint(
                        name: name, generation: generation, timestamp: timestamp,
                        location: CommitLocation(fileNumber: file, address: address)))
            }
        }
        return history
    }

    /// What Docs/Format.md §17.1 does not allow in an entry of the tree, if anything.
    package static func problem(key: [UInt8], value: [UInt8]) -> String? {
        if key == policy { return value.count == 24 ? nil : "the policy is not 24 bytes" }
        guard key.starts(with: checkpointPrefix) else { return "it is not a key of the retention tree" }
        if key.count == checkpointPrefix.count { return "a checkpoint has no name" }
        if value.count != 36 { return "a checkpoint is not 36 bytes" }
        if value.littleEndianUInt64(at: 0) == 0 { return "a checkpoint names generation 0" }
        return nil
    }
}
