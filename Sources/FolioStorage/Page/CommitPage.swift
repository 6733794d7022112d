/// What one commit changed: per tree, the keys it created, updated or deleted, and the
/// trees it dropped. Appended with every commit and reachable from its root, so observers
/// (in this process or another) can replay what changed between two generations.
public struct ChangeRecord: Sendable, Equatable {
    /// How a key changed relative to the previous generation.
    public enum Kind: UInt8, Sendable {
        /// The key did not exist before the commit and does after.
        case created = 1
        /// The key existed before and after; its value was replaced.
        case updated = 2
        /// The key existed before and does not after.
        case deleted = 3
    }

    /// One changed key.
    public struct Entry: Sendable, Equatable {
        /// The changed key.
        public var key: [UInt8]
        /// How it changed.
        public var kind: Kind
        /// A change of `key`.
        public init(key: [UInt8], kind: Kind) {
            self.key = key
            self.kind = kind
        }
    }

    /// The changed keys of one tree, in key order, or that it changed wholesale.
    public struct TreeChanges: Sendable, Equatable {
        /// The tree's name.
        public var tree: String
        /// Its changed keys, in key order (empty when ``isChangedWholesale``).
        public var entries: [Entry]
        /// The commit changed more keys of the tree than a change record lists
        /// (``StoreOptions/changeRecordKeyLimit``): any key may have changed, and a reader
        /// that follows the tree re-reads it from the new generation.
        public var isChangedWholesale: Bool
        /// The changes of `tree`.
        public init(tree: String, entries: [Entry]) {
            self.tree = tree
            self.entries = entries
            isChangedWholesale = false
        }

        /// A tree the commit changed wholesale: no keys listed, any may have changed.
        public static func wholesale(_ tree: String) -> TreeChanges {
            var changes = TreeChanges(tree: tree, entries: [])
            changes.isChangedWholesale = true
            return changes
        }
    }

    /// Changed trees, in name order.
    public var trees: [TreeChanges]
    /// Trees removed by the commit (with all their keys), in name order.
    public var droppedTrees: [String]

    /// A change record (empty by default).
    public init(trees: [TreeChanges] = [], droppedTrees: [String] = []) {
        self.trees = trees
        self.droppedTrees = droppedTrees
    }

    /// True if the commit changed nothing.
    public var isEmpty: Bool { trees.isEmpty && droppedTrees.isEmpty }

    /// The listed changes of one tree, if it changed: empty for a tree changed wholesale
    /// (check ``isChangedWholesale(_:)`` first).
    public func changes(in tree: String) -> [Entry] {
        trees.first(where: { $0.tree == tree })?.entries ?? []
    }

    /// Whether the commit changed `tree` wholesale (too many keys to list): whoever follows
    /// the tree re-reads it from the new generation instead of applying entries.
    public func isChangedWholesale(_ tree: String) -> Bool {
        trees.first(where: { $0.tree == tree })?.isChangedWholesale ?? false
    }
}

/// Where a commit page is: which snapshot file and where in it.
public struct CommitLocation: Sendable, Hashable, CustomStringConvertible {
    /// The snapshot file's number (its name is the number in 16 hex digits).
    public var fileNumber: UInt64
    /// The commit page in that file.
    public var address: PageAddress

    /// The commit page at `address` of snapshot file `fileNumber`.
    public init(fileNumber: UInt64, address: PageAddress) {
        self.fileNumber = fileNumber
        self.address = address
    }

    public var description: String { "file \(fileNumber) \(address)" }
}

/// Why a generation exists.
public enum CommitKind: UInt8, Sendable {
    /// A write transaction.
    case transaction = 0
    /// The empty first generation of a new store.
    case creation = 1
    /// A compaction: same contents, new snapshot file.
    case compaction = 2
}

/// The body of a commit page (Docs/Format.md §7).
struct CommitRecord: Sendable, Equatable {
    var generation: UInt64
    /// Microseconds since 1970-01-01 UTC.
    var timestamp: UInt64
    var kind: CommitKind
    var catalogRoot: PageAddress
    /// Bytes reachable from this generation's root, the commit page included.
    var liveBytes: UInt64
    /// The commit before this one, if any.
    var previous: CommitLocation?
    var changes: ChangeRecord
    /// Format version 2: the CRC-32C of the run's pages before this commit page, seeded with
    /// the previous commit page's checksum (Docs/Format.md §7, "Runs and the chain"). 0 in
    /// version 1 pages and in creation and compaction commits, which start no run.
    var runChecksum: UInt32 = 0

    /// The entry count that says a changed-tree record lists no entries because the tree
    /// changed wholesale. No page can hold that many entries, so a reader that does not
    /// know the marker rejects the record rather than read it as "nothing changed".
    static let changedWholesaleMarker = UInt32.max

    /// Appends the commit page at `fileOffset`; `liveBytesBeforePage` is the live byte count
    /// excluding the page itself, whose length is only known once encoded.
    static func encode(
        _ record: CommitRecord, liveBytesBeforePage: UInt64, into writer: inout ByteWriter,
        at fileOffset: UInt64
    ) -> (address: PageAddress, liveBytes: UInt64, chain: UInt32) {
        let start = PageHeader.begin(&writer, kind: .commit, count: 0, generation: record.generation)
        writer.append(record.generation)
        writer.append(record.timestamp)
        writer.append(record.kind.rawValue)
        writer.appendZeros(3)
        writer.append(record.runChecksum)
        writer.append(record.catalogRoot.offset)
        writer.append(record.catalogRoot.length)
        writer.append(UInt32(0))
        let liveBytesOffset = writer.count
        writer.append(UInt64(0))
        writer.append(record.previous?.fileNumber ?? 0)
        writer.append(record.previous?.address.offset ?? 0)
        writer.append(record.previous?.address.length ?? 0)
        writer.append(UInt32(0))
        writer.append(UInt32(record.changes.trees.count))
        for tree in record.changes.trees {
            let name = Array(tree.tree.utf8)
            writer.append(UInt16(name.count))
            writer.append(bytes: name)
            // A tree changed wholesale lists no entries: its count is the marker (Docs/
            // Format.md §7, "Trees changed wholesale").
            if tree.isChangedWholesale {
                writer.append(Self.changedWholesaleMarker)
                continue
            }
            writer.append(UInt32(tree.entries.count))
            for entry in tree.entries {
                writer.append(entry.kind.rawValue)
                writer.append(UInt16(entry.key.count))
                writer.append(bytes: entry.key)
            }
        }
        writer.append(UInt32(record.changes.droppedTrees.count))
        for tree in record.changes.droppedTrees {
            let name = Array(tree.utf8)
            writer.append(UInt16(name.count))
            writer.append(bytes: name)
        }
        let length = UInt64(writer.count - start)
        let liveBytes = liveBytesBeforePage + length
        writer.set(liveBytes, at: liveBytesOffset)
        PageHeader.seal(&writer, start: start, fileOffset: fileOffset)
        // The page's checksum is the chain value the next run's checksum is seeded with.
        let chain = writer.bytes.littleEndianUInt32(at: start)
        return (PageAddress(offset: fileOffset, length: UInt32(length)), liveBytes, chain)
    }

    /// Validates and decodes a commit page. Never traps on any input.
    static func decode(_ bytes: [UInt8], address: PageAddress, file: String) throws(StorageError) -> CommitRecord {
        let header = try PageHeader.validate(bytes, address: address, file: file, expecting: .commit)
        func corrupt(_ detail: String) -> StorageError {
            .corruption(
                Corruption(
                    file: file, offset: address.offset, detail: "commit page: \(detail)",
                    expectedChecksum: header.checksum, actualChecksum: header.checksum))
        }
        var reader = ByteReader(bytes, from: PageHeader.size)
        guard let generation = reader.readUInt64(), let timestamp = reader.readUInt64(),
            let kindByte = reader.readUInt8(), reader.skip(3), let runChecksum = reader.readUInt32(),
            let catalogOffset = reader.readUInt64(), let catalogLength = reader.readUInt32(), reader.skip(4),
            let liveBytes = reader.readUInt64(),
            let previousFile = reader.readUInt64(), let previousOffset = reader.readUInt64(),
            let previousLength = reader.readUInt32(), reader.skip(4),
            let treeCount = reader.readUInt32()
        else { throw corrupt("fixed fields run past the page end") }
        guard generation == header.generation else {
            throw corrupt("generation \(generation) differs from the page header's \(header.generation)")
        }
        guard let kind = CommitKind(rawValue: kindByte) else { throw corrupt("unknown commit kind \(kindByte)") }
        let catalogRoot = PageAddress(offset: catalogOffset, length: catalogLength)
        guard catalogRoot.isNone || catalogRoot.ends(atOrBefore: address.offset) else {
            throw corrupt("catalog root \(catalogRoot) is not before the commit page")
        }
        // The file number alone says whether there is a previous commit (Docs/Format.md §7):
        // a link that names a file names a commit page, which can never lie inside the
        // snapshot header. Reading it anyway would read the header as a page.
        guard
            previousFile == 0
                || (previousOffset >= UInt64(SnapshotHeader.size) && previousLength >= UInt32(PageHeader.size))
        else {
            throw corrupt(
                "previous commit link (file \(previousFile), offset \(previousOffset), length \(previousLength)) "
                    + "points into the snapshot header")
        }
        var trees: [ChangeRecord.TreeChanges] = []
        for _ in 0..<treeCount {
            guard let nameLength = reader.readUInt16(), let name = reader.readBytes(Int(nameLength)),
                let entryCount = reader.readUInt32()
            else { throw corrupt("changed tree runs past the page end") }
            if entryCount == Self.changedWholesaleMarker {
                guard let tree = String(validating: name, as: UTF8.self) else {
                    throw corrupt("changed tree name is not UTF-8")
                }
                trees.append(.wholesale(tree))
                continue
            }
            guard let count = OnDiskInteger.count(entryCount), count <= reader.remaining / 3 else {
                throw corrupt("impossible entry count \(entryCount)")
            }
            var entries: [ChangeRecord.Entry] = []
            entries.reserveCapacity(count)
            for _ in 0..<entryCount {
                guard let kindByte = reader.readUInt8(), let kind = ChangeRecord.Kind(rawValue: kindByte),
                    let keyLength = reader.readUInt16(), let key = reader.readBytes(Int(keyLength))
                else {
                    throw corrupt("change entry is malformed or runs past the page end")
                }
                entries.append(.init(key: key, kind: kind))
            }
            // Names are UTF-8 (Docs/Format.md §7). Decoding invalid bytes leniently would hand
            // observers a name that was never written (U+FFFD for each bad byte): corruption.
            guard let tree = String(validating: name, as: UTF8.self) else {
                throw corrupt("changed tree name is not UTF-8")
            }
            trees.append(.init(tree: tree, entries: entries))
        }
        guard let droppedCount = reader.readUInt32(), let count = OnDiskInteger.count(droppedCount),
            count <= reader.remaining / 2
        else {
            throw corrupt("dropped tree count missing or impossible")
        }
        var dropped: [String] = []
        for _ in 0..<droppedCount {
            guard let nameLength = reader.readUInt16(), let name = reader.readBytes(Int(nameLength)) else {
                throw corrupt("dropped tree name runs past the page end")
            }
            guard let tree = String(validating: name, as: UTF8.self) else {
                throw corrupt("dropped tree name is not UTF-8")
            }
            dropped.append(tree)
        }
        guard reader.isAtEnd else { throw corrupt("\(reader.remaining) stray bytes at the end") }
        let previous =
            previousFile == 0
            ? nil
            : CommitLocation(
                fileNumber: previousFile, address: PageAddress(offset: previousOffset, length: previousLength))
        return CommitRecord(
            generation: generation, timestamp: timestamp, kind: kind, catalogRoot: catalogRoot,
            liveBytes: liveBytes, previous: previous,
            changes: ChangeRecord(trees: trees, droppedTrees: dropped), runChecksum: runChecksum)
    }
}
