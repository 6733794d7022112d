/// The 64-byte header at offset 0 of every snapshot file (Docs/Format.md §3):
///
///     0  8 bytes  magic "FOLIOSNP"
///     8  u32      format version
///     12 u32      header length (64)
///     16 u64      file number (also in the file name)
///     24 u64      generation of the commit that created the file
///     32 u64      creation time, microseconds since 1970
///     40 20 bytes zero
///     60 u32      CRC-32C of bytes 0 ..< 60
///
/// Pages follow from offset 64. Bytes are only ever appended after the header: nothing
/// committed is rewritten (Docs/Format.md §3, Docs/Architecture.md invariant 1).
struct SnapshotHeader: Equatable, Sendable {
    static let size = 64
    static let magic: [UInt8] = Array("FOLIOSNP".utf8)

    var fileNumber: UInt64
    var createdGeneration: UInt64
    var timestamp: UInt64
    /// The store's format version when the file was created (Docs/Format.md §3): a store
    /// upgraded later keeps the version its older files' headers say.
    var formatVersion: UInt32 = StorageFormat.createdVersion

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.size)
        writer.append(bytes: Self.magic)
        writer.append(formatVersion)
        writer.append(UInt32(Self.size))
        writer.append(fileNumber)
        writer.append(createdGeneration)
        writer.append(timestamp)
        writer.appendZeros(20)
        writer.append(CRC32C.checksum(writer.bytes))
        return writer.bytes
    }

    static func decode(_ bytes: [UInt8], file: String) throws(StorageError) -> SnapshotHeader {
        // Once the header's bytes are in hand, every error names its stored and computed checksum.
        var checksums: (stored: UInt32, actual: UInt32)? = nil
        func corrupt(_ detail: String) -> StorageError {
            .corruption(
                Corruption(
                    file: file, offset: 0, detail: "snapshot header: \(detail)",
                    expectedChecksum: checksums?.stored, actualChecksum: checksums?.actual))
        }
        guard bytes.count >= size else { throw corrupt("file shorter than its \(size)-byte header") }
        let stored = bytes.littleEndianUInt32(at: 60)
        let actual = CRC32C.checksum(Array(bytes[0..<60]))
        checksums = (stored, actual)
        guard Array(bytes[0..<8]) == magic else { throw corrupt("bad magic") }
        guard stored == actual else { throw corrupt("checksum mismatch") }
        let version = bytes.littleEndianUInt32(at: 8)
        guard version >= 1 else { throw corrupt("format version 0") }
        guard version <= StorageFormat.version else {
            throw .unsupportedFormatVersion(path: file, found: version, supported: StorageFormat.version)
        }
        guard bytes.littleEndianUInt32(at: 12) == UInt32(size) else { throw corrupt("unexpected header length") }
        return SnapshotHeader(
            fileNumber: bytes.littleEndianUInt64(at: 16),
            createdGeneration: bytes.littleEndianUInt64(at: 24),
            timestamp: bytes.littleEndianUInt64(at: 32), formatVersion: version)
    }
}

/// The on-disk format versions this engine reads and writes (Docs/Format.md §18).
public enum StorageFormat {
    /// The newest format version this engine reads and writes: 3, which adds trees
    /// recorded as changed wholesale to version 2 (root slots written in place, runs
    /// chained by checksums). Versions 1 and 2 are read; a version 1 store is upgraded to
    /// version 2 by its first commit, and a store becomes version 3 only at the first
    /// commit that records a tree wholesale, so that builds reading version 2 keep reading
    /// every store that never needed more.
    public static let version: UInt32 = 3

    /// The version a new store (and a backup) is created in, and that a store's root
    /// slots keep until a commit needs ``wholesaleVersion``.
    static let createdVersion: UInt32 = 2

    /// The version that added the wholesale marker of a change record (Docs/Format.md §7).
    static let wholesaleVersion: UInt32 = 3

    /// The version of the root slot naming a commit built on a root of version `base`
    /// that records `changes`: never lower than the base's (a store is never downgraded),
    /// at least ``createdVersion``, and ``wholesaleVersion`` if a tree is recorded
    /// wholesale.
    static func version(after base: UInt32, recording changes: ChangeRecord) -> UInt32 {
        let needed = changes.trees.contains(where: \.isChangedWholesale) ? wholesaleVersion : createdVersion
        return max(base, needed)
    }
}
