/// One committed root: everything needed to read a generation (Docs/Format.md §8).
///
/// The root file holds two 128-byte slots: slot 0 is the current root, slot 1 a copy of the
/// root before it. A damaged slot 0 (bad checksum) opens at slot 1, and says so in the log.
///
///     0   8 bytes magic "FOLIROOT"
///     8   u32     format version
///     12  u32     slot length (128)
///     16  u64     generation
///     24  u64     snapshot file number
///     32  u64     committed length of that file (end of the commit page)
///     40  u64     commit page offset      48  u32  commit page length     52 u32 0
///     56  u64     catalog root offset     64  u32  catalog root length    68 u32 0
///     72  u64     live bytes
///     80  u64     commit time, microseconds since 1970
///     88  u64     previous commit: file number (0: none)
///     96  u64     previous commit: offset 104 u32  previous commit: length
///     108 16 bytes zero
///     124 u32     CRC-32C of bytes 0 ..< 124
struct RootRecord: Equatable, Sendable {
    static let slotSize = 128
    static let fileSize = 2 * slotSize
    static let magic: [UInt8] = Array("FOLIROOT".utf8)

    var generation: UInt64
    var snapshotFile: UInt64
    var committedLength: UInt64
    var commitPage: PageAddress
    var catalogRoot: PageAddress
    var liveBytes: UInt64
    var timestamp: UInt64
    var previous: CommitLocation?

    var location: CommitLocation { CommitLocation(fileNumber: snapshotFile, address: commitPage) }

    func encodedSlot() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.slotSize)
        writer.append(bytes: Self.magic)
        writer.append(StorageFormat.version)
        writer.append(UInt32(Self.slotSize))
        writer.append(generation)
        writer.append(snapshotFile)
        writer.append(committedLength)
        writer.append(commitPage.offset)
        writer.append(commitPage.length)
        writer.append(UInt32(0))
        writer.append(catalogRoot.offset)
        writer.append(catalogRoot.length)
        writer.append(UInt32(0))
        writer.append(liveBytes)
        writer.append(timestamp)
        writer.append(previous?.fileNumber ?? 0)
        writer.append(previous?.address.offset ?? 0)
        writer.append(previous?.address.length ?? 0)
        writer.appendZeros(16)
        writer.append(CRC32C.checksum(writer.bytes))
        return writer.bytes
    }

    /// The root file's bytes: this root in slot 0 and `previous` (if any) in slot 1.
    static func encodeFile(current: RootRecord, previous: RootRecord?) -> [UInt8] {
        current.encodedSlot() + (previous?.encodedSlot() ?? [UInt8](repeating: 0, count: slotSize))
    }

    /// Decodes one slot; throws a corruption error naming `file` and the slot's offset.
    static func decodeSlot(_ bytes: [UInt8], slot: Int, file: String) throws(StorageError) -> RootRecord {
        let base = slot * slotSize
        // Once the slot's bytes are in hand, every error names its stored and computed checksum.
        var checksums: (stored: UInt32, actual: UInt32)? = nil
        func corrupt(_ detail: String) -> StorageError {
            .corruption(Corruption(file: file, offset: UInt64(base), detail: "root slot \(slot): \(detail)",
                                   expectedChecksum: checksums?.stored, actualChecksum: checksums?.actual))
        }
        guard bytes.count >= base + slotSize else { throw corrupt("root file has only \(bytes.count) bytes") }
        let slotBytes = Array(bytes[base..<(base + slotSize)])
        let stored = slotBytes.littleEndianUInt32(at: 124)
        let actual = CRC32C.checksum(Array(slotBytes[0..<124]))
        checksums = (stored, actual)
        guard Array(slotBytes[0..<8]) == magic else { throw corrupt("bad magic") }
        guard stored == actual else { throw corrupt("checksum mismatch") }
        let version = slotBytes.littleEndianUInt32(at: 8)
        guard version >= 1 else { throw corrupt("format version 0") }
        guard version <= StorageFormat.version else {
            throw .unsupportedFormatVersion(path: file, found: version, supported: StorageFormat.version)
        }
        guard slotBytes.littleEndianUInt32(at: 12) == UInt32(slotSize) else { throw corrupt("unexpected slot length") }
        let commitPage = PageAddress(offset: slotBytes.littleEndianUInt64(at: 40), length: slotBytes.littleEndianUInt32(at: 48))
        let catalogRoot = PageAddress(offset: slotBytes.littleEndianUInt64(at: 56), length: slotBytes.littleEndianUInt32(at: 64))
        let committedLength = slotBytes.littleEndianUInt64(at: 32)
        guard commitPage.offset >= UInt64(SnapshotHeader.size), commitPage.ends(atOrBefore: committedLength),
              commitPage.end == committedLength, catalogRoot.isNone || catalogRoot.ends(atOrBefore: commitPage.offset) else {
            throw corrupt("inconsistent page addresses")
        }
        let previousFile = slotBytes.littleEndianUInt64(at: 88)
        let previous = previousFile == 0 ? nil : CommitLocation(
            fileNumber: previousFile,
            address: PageAddress(offset: slotBytes.littleEndianUInt64(at: 96), length: slotBytes.littleEndianUInt32(at: 104)))
        return RootRecord(generation: slotBytes.littleEndianUInt64(at: 16),
                          snapshotFile: slotBytes.littleEndianUInt64(at: 24),
                          committedLength: committedLength, commitPage: commitPage, catalogRoot: catalogRoot,
                          liveBytes: slotBytes.littleEndianUInt64(at: 72), timestamp: slotBytes.littleEndianUInt64(at: 80),
                          previous: previous)
    }
}
