/// A value as a leaf holds it.
enum LeafValue: Sendable, Equatable {
    /// Stored in the leaf itself: a slice of the page the leaf was read from (read in place,
    /// never copied out), or of the array a transaction was given.
    case inline(ArraySlice<UInt8>)
    /// Stored in its own overflow page.
    case overflow(PageAddress)
    /// A large value of an uncommitted transaction; becomes `.overflow` when written.
    case pendingOverflow([UInt8])

    /// Bytes of the value itself, wherever it is stored (what a transaction holds in memory
    /// for it until the commit).
    var byteCount: Int {
        switch self {
        case .inline(let bytes): return bytes.count
        case .pendingOverflow(let bytes): return bytes.count
        case .overflow: return 12
        }
    }

    /// Bytes this value takes in its leaf entry after the key (Docs/Format.md §5).
    var encodedSize: Int {
        switch self {
        case .inline(let bytes): return 4 + bytes.count
        case .overflow, .pendingOverflow: return 12
        }
    }
}

/// A decoded leaf page: keys in strictly increasing byte order and their values.
///
/// A leaf read from a file is read in place: its entries are the page's own bytes, which
/// the node keeps alive, and decoding builds only the offset table (``LeafEntries``).
struct LeafNode: Sendable {
    var entries: LeafEntries
    /// Bytes of the page the leaf was decoded from: what its entries encode to, which a
    /// copy-on-write copy takes as its size without reading them.
    let pageLength: Int

    /// Every key, in order (``LeafEntries/keys``).
    var keys: [ArraySlice<UInt8>] { entries.keys }

    /// Every value, in order (``LeafEntries/values``).
    var values: [LeafValue] { entries.values }
}

/// A decoded tree page, as the page cache holds it. Immutable once decoded.
enum StoredNode: Sendable {
    case leaf(LeafNode)
    case branch(BranchNode)
}

/// Encoding and decoding of leaf and branch pages (Docs/Format.md §5 and §6).
enum TreePage {
    /// Bytes of a branch entry after the first child: u16 key length, key, u64 + u32 child.
    static func branchEntrySize(keyCount: Int) -> Int { 2 + keyCount + 12 }

    /// Size of a branch page with only its first child.
    static let emptyBranchSize = PageHeader.size + 12

    /// Writes a leaf page of `entries`. A kind 2 entry (a value not yet in its overflow page)
    /// is written as a reference to `pendingAddresses[i]`, where `i` is the index it holds:
    /// the overflow pages are appended before their leaf.
    static func encodeLeaf(
        _ entries: LeafEntries, pendingAddresses: [PageAddress], generation: UInt64,
        into writer: inout ByteWriter, at fileOffset: UInt64
    ) {
        let start = PageHeader.begin(&writer, kind: .leaf, count: entries.count, generation: generation)
        // Sized first, then written in one piece (ByteWriter.append(count:_:)).
        writer.append(count: entries.entryBytes) { cursor in
            entries.write(into: &cursor, pendingAddresses: pendingAddresses)
        }
        PageHeader.seal(&writer, start: start, fileOffset: fileOffset)
    }

    /// Writes a leaf page of `keys[i]: values[i]` (no value pending an overflow page).
    static func encodeLeaf(
        keys: [ArraySlice<UInt8>], values: [LeafValue], generation: UInt64,
        into writer: inout ByteWriter, at fileOffset: UInt64
    ) {
        encodeLeaf(
            LeafEntries(keys: keys, values: values), pendingAddresses: [], generation: generation, into: &writer,
            at: fileOffset)
    }

    static func encodeBranch(
        keys: [ArraySlice<UInt8>], children: [PageAddress], generation: UInt64,
        into writer: inout ByteWriter, at fileOffset: UInt64
    ) {
        let start = PageHeader.begin(&writer, kind: .branch, count: children.count, generation: generation)
        var size = 12
        for key in keys { size += 14 + key.count }
        writer.append(count: size) { cursor in
            cursor.write(children[0].offset)
            cursor.write(children[0].length)
            for index in keys.indices {
                cursor.write(UInt16(keys[index].count))
                cursor.write(bytes: keys[index])
                cursor.write(children[index + 1].offset)
                cursor.write(children[index + 1].length)
            }
        }
        PageHeader.seal(&writer, start: start, fileOffset: fileOffset)
    }

    /// Writes a branch page that is `page` (a branch page of the same separators, header
    /// included) with child `index` pointing at `address` for each `(index, address)` of
    /// `changed` (ascending indexes): one copy of the body, then a write per changed child.
    /// The bytes are those ``encodeBranch(keys:children:generation:into:at:)`` writes for
    /// the same separators and children.
    static func encodeBranch(
        copying page: [UInt8], keys: [ArraySlice<UInt8>], changed: [(index: Int, address: PageAddress)],
        generation: UInt64, into writer: inout ByteWriter, at fileOffset: UInt64
    ) {
        let start = PageHeader.begin(&writer, kind: .branch, count: keys.count + 1, generation: generation)
        let body = writer.count
        writer.append(bytes: page[PageHeader.size...])
        // Child 0 is the body's first 12 bytes; child j + 1 follows separator j.
        var child = 0, offset = 0
        for (index, address) in changed {
            while child < index {
                offset += 14 + keys[child].count
                child += 1
            }
            writer.set(address.offset, at: body + offset)
            writer.set(address.length, at: body + offset + 8)
        }
        PageHeader.seal(&writer, start: start, fileOffset: fileOffset)
    }

    /// Validates and decodes a leaf or branch page read from `address`: total on any input,
    /// so bytes that pass the checksum but not the structure are a corruption error too
    /// (Docs/Architecture.md invariant 3).
    ///
    /// Structural rules checked here (each failure is a corruption error, never a trap):
    /// the body is consumed exactly; a branch has at least two children; a leaf at least one
    /// entry; keys are at most ``StorageLimits/maximumKeyLength`` bytes; every child and
    /// overflow page ends at or before this page's offset. Pages are appended children first,
    /// so that last rule holds for every honest page, and it makes every walk over damaged
    /// data terminate: offsets strictly decrease on the way down.
    static func decode(_ bytes: [UInt8], address: PageAddress, file: String) throws(StorageError) -> StoredNode {
        let header = try PageHeader.validate(bytes, address: address, file: file)
        return try parse(bytes, header: header, address: address, file: file)
    }

    /// The node of a page this process has just encoded (its checksum is known good, so it
    /// is not computed again): what a commit puts in the cache for the pages it wrote. The
    /// node's slices point into `bytes`, so the cache holds exactly the page's bytes.
    static func decodeWritten(_ bytes: [UInt8], address: PageAddress, file: String) throws(StorageError) -> StoredNode {
        try parse(bytes, header: PageHeader.fields(ofSealed: bytes), address: address, file: file)
    }

    /// The node of a page whose header ``PageHeader/validate(raw:address:file:expecting:)``
    /// has checked (`header` is what it returned): the structure only, see
    /// ``decode(_:address:file:)``.
    static func decode(
        _ bytes: [UInt8], checked header: PageHeader.Fields, address: PageAddress, file: String
    ) throws(StorageError) -> StoredNode {
        try parse(bytes, header: header, address: address, file: file)
    }

    /// Whether the checked leaf page `page`, of `count` entries, holds only inline values in
    /// entries that fill its body exactly as ``decode(_:address:file:)`` requires: the leaves a
    /// copy moves whole (``PageAppender/appendPage(copying:from:kind:count:)``) without
    /// decoding them. False for a leaf that references an overflow page, and for any page
    /// decoding would reject (which the copy then decodes, to report it).
    static func isInlineLeaf(_ page: UnsafeRawBufferPointer, count: Int) -> Bool {
        guard count >= 1 else { return false }
        var position = PageHeader.size
        for _ in 0..<count {
            guard page.count - position >= 7 else { return false }
            let keyLength = Int(UInt16(littleEndian: page.loadUnaligned(fromByteOffset: position, as: UInt16.self)))
            guard page[position + 2] == LeafEntries.inlineKind, keyLength <= StorageLimits.maximumKeyLength,
                page.count - position - 7 >= keyLength
            else { return false }
            let valueLength = UInt32(
                littleEndian: page.loadUnaligned(fromByteOffset: position + 3 + keyLength, as: UInt32.self))
            guard UInt64(valueLength) <= UInt64(page.count - position - 7 - keyLength) else { return false }
            position += 7 + keyLength + Int(valueLength)
        }
        return position == page.count
    }

    /// The structure of a page whose header has been read: see ``decode(_:address:file:)``.
    private static func parse(
        _ bytes: [UInt8], header: PageHeader.Fields, address: PageAddress, file: String
    ) throws(StorageError) -> StoredNode {
        func corrupt(_ detail: String) -> StorageError {
            .corruption(
                Corruption(
                    file: file, offset: address.offset, detail: detail,
                    expectedChecksum: header.checksum, actualChecksum: header.checksum))
        }
        var reader = ByteReader(bytes, from: PageHeader.size)
        switch header.kind {
        case .leaf:
            guard header.count >= 1 else { throw corrupt("leaf page with no entries") }
            var starts: [UInt32] = []
            starts.reserveCapacity(header.count)
            for index in 0..<header.count {
                let start = reader.position
                guard let keyLength = reader.readUInt16(), let valueKind = reader.readUInt8() else {
                    throw corrupt("leaf entry \(index) header runs past the page end")
                }
                guard Int(keyLength) <= StorageLimits.maximumKeyLength, reader.skip(Int(keyLength)) else {
                    throw corrupt("leaf entry \(index) key of \(keyLength) bytes is too long or runs past the page end")
                }
                switch valueKind {
                case LeafEntries.inlineKind:
                    guard let valueLength = reader.readUInt32(), let length = OnDiskInteger.count(valueLength),
                        reader.skip(length)
                    else {
                        throw corrupt("leaf entry \(index) value runs past the page end")
                    }
                case LeafEntries.overflowKind:
                    guard let offset = reader.readUInt64(), let length = reader.readUInt32() else {
                        throw corrupt("leaf entry \(index) overflow reference runs past the page end")
                    }
                    let target = PageAddress(offset: offset, length: length)
                    guard offset >= SnapshotHeader.size, length >= UInt32(PageHeader.size),
                        target.ends(atOrBefore: address.offset)
                    else {
                        throw corrupt("leaf entry \(index) overflow reference \(target) is not before the leaf")
                    }
                default:
                    // Kind 2 is never on disk: it is a transaction's value not yet written.
                    throw corrupt("leaf entry \(index) has unknown value kind \(valueKind)")
                }
                starts.append(UInt32(start))
            }
            guard reader.isAtEnd else { throw corrupt("\(reader.remaining) stray bytes after the last leaf entry") }
            let entries = LeafEntries(page: bytes, starts: starts, entryBytes: bytes.count - PageHeader.size)
            return .leaf(LeafNode(entries: entries, pageLength: bytes.count))
        case .branch:
            guard header.count >= 2 else { throw corrupt("branch page with \(header.count) children") }
            var keys: [ArraySlice<UInt8>] = []
            var children: [PageAddress] = []
            keys.reserveCapacity(header.count - 1)
            children.reserveCapacity(header.count)
            for index in 0..<header.count {
                if index > 0 {
                    guard let keyLength = reader.readUInt16(), Int(keyLength) <= StorageLimits.maximumKeyLength,
                        let key = reader.readSlice(Int(keyLength))
                    else {
                        throw corrupt("branch separator \(index) runs past the page end or is too long")
                    }
                    keys.append(key)
                }
                guard let offset = reader.readUInt64(), let length = reader.readUInt32() else {
                    throw corrupt("branch child \(index) runs past the page end")
                }
                let child = PageAddress(offset: offset, length: length)
                guard offset >= SnapshotHeader.size, length >= UInt32(PageHeader.size),
                    child.ends(atOrBefore: address.offset)
                else {
                    throw corrupt("branch child \(index) at \(child) is not before its parent")
                }
                children.append(child)
            }
            guard reader.isAtEnd else { throw corrupt("\(reader.remaining) stray bytes after the last branch child") }
            return .branch(BranchNode(keys: keys, children: children, pageLength: bytes.count, page: bytes))
        case .overflow, .commit:
            throw corrupt("expected a leaf or branch page, found a \(header.kind.name) page")
        }
    }

    /// Validates an overflow page and returns the value it holds.
    static func decodeOverflow(_ bytes: [UInt8], address: PageAddress, file: String) throws(StorageError) -> [UInt8] {
        _ = try PageHeader.validate(bytes, address: address, file: file, expecting: .overflow)
        return Array(bytes[PageHeader.size...])
    }

    static func encodeOverflow(
        _ value: [UInt8], generation: UInt64, into writer: inout ByteWriter, at fileOffset: UInt64
    ) {
        let start = PageHeader.begin(&writer, kind: .overflow, count: 0, generation: generation)
        writer.append(bytes: value)
        PageHeader.seal(&writer, start: start, fileOffset: fileOffset)
    }
}

/// Size limits of the engine. Pages are variable-size; these bound them.
public enum StorageLimits {
    /// Longest key, in bytes. Keeps at least several entries in every page.
    public static let maximumKeyLength = 1024
    /// Values longer than this go into their own overflow page, so that leaves stay small
    /// and a scan over keys does not read large blobs (the YYCache trade-off).
    public static let inlineValueLimit = 2048
    /// Longest value, in bytes (an overflow page's length must fit in 32 bits).
    /// Clamped to `Int.max` first: on 32-bit platforms `Int(UInt32.max)` would trap.
    public static let maximumValueLength = Int(clamping: UInt32.max) - 4096
    /// The format's bound: no leaf or branch page is longer (Docs/Format.md §19, I5).
    /// Readers accept every page up to it, whichever writer policy wrote it.
    public static let maximumPageSize = 8192
    /// The writer's policy: a leaf or branch whose encoded size exceeds this is split.
    ///
    /// Half the format's bound, by measurement (Docs/Benchmarks.md): a
    /// single-record commit rewrites a leaf and the branches above it, so the page size is
    /// most of its bytes; 4 KiB pages write 6.7 KB per update of a 10,000-record datastore
    /// where 8 KiB pages wrote 14.9 KB, with half the CPU per commit.
    public static let splitPageSize = 4096
    /// A non-root leaf or branch smaller than this is merged with or refilled from a sibling
    /// (writer policy; the verifier checks it). At most `(splitPageSize - largest entry) / 2`
    /// so that redistribution can always satisfy it (TreeEditor+Balance), where the largest
    /// entry is `3 + 1024 + 4 + 2048` bytes.
    public static let minimumPageFill = 500
}
