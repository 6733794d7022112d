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

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.size)
        writer.append(bytes: Self.magic)
        writer.append(StorageFormat.version)
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
            timestamp: bytes.littleEndianUInt64(at: 32))
    }
}

/// The on-disk format this engine writes and the newest it reads.
public enum StorageFormat {
    /// Format version 2 (Docs/Format.md): root slots written in place, runs chained by
    /// checksums. Version 1 stores are read, and upgraded by their first commit.
    public static let version: UInt32 = 2
}
