/// One committed root: everything needed to read a generation (Docs/Format.md §8).
///
/// Format versions 2 and 3: the root file holds two 128-byte slots, at offsets 0 and 4096 (in
/// different sectors and pages, so a torn write of one never touches the other), written
/// in place and alternately (see ``RootSlots``). The valid slot with the highest generation
/// wins. Version 1 root files (256 bytes: slot 0 the current root, slot 1 the one before)
/// are still read; their slot 0 always holds the higher generation, so the rule is the same.
///
///     0   8 bytes magic "FOLIROOT"
///     8   u32     format version
///     12  u32     slot length (128)
///     16  u64     generation
///     24  u64     snapshot file number
///     32  u64     committed length of that file (end of the commit page)
///     40  u64     commit page offset      48  u32  commit page length
///     52  u32     chain: the commit page's stored checksum (0 in version 1)
///     56  u64     catalog root offset     64  u32  catalog root length    68 u32 0
///     72  u64     live bytes
///     80  u64     commit time, microseconds since 1970
///     88  u64     previous commit: file number (0: none)
///     96  u64     previous commit: offset 104 u32  previous commit: length
///     108 16 bytes zero
///     124 u32     CRC-32C of bytes 0 ..< 124
struct RootRecord: Equatable, Sendable {
    static let slotSize = 128
    /// Where slot 1 starts in a version 2 (or 3) root file.
    static let slotStride = 4096
    /// A version 2 (or 3) root file's length.
    static let fileSize = slotStride + slotSize
    /// A version 1 root file's length (its slots are adjacent).
    static let versionOneFileSize = 2 * slotSize
    static let magic: [UInt8] = Array("FOLIROOT".utf8)

    var generation: UInt64
    var snapshotFile: UInt64
    var committedLength: UInt64
    var commitPage: PageAddress
    var catalogRoot: PageAddress
    var liveBytes: UInt64
    var timestamp: UInt64
    var previous: CommitLocation?
    /// The stored page checksum of the commit page: the seed of the next run's checksum
    /// (Docs/Format.md §7, "The commit chain"). 0 in slots written by format version 1.
    var chain: UInt32 = 0
    /// The format version of the slot that names this root (Docs/Format.md §18): read, the
    /// highest version among the root file's slots, which is the store's; built by a
    /// commit, its base's, raised to 3 when it records a tree wholesale. It decides the
    /// runs recovery follows from this root (RunRecovery) and the version a slot naming it
    /// is written with (RootSlots).
    var formatVersion: UInt32 = StorageFormat.createdVersion

    var location: CommitLocation { CommitLocation(fileNumber: snapshotFile, address: commitPage) }

    func encodedSlot() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.slotSize)
        writer.append(bytes: Self.magic)
        writer.append(formatVersion)
        writer.append(UInt32(Self.slotSize))
        writer.append(generation)
        writer.append(snapshotFile)
        writer.append(committedLength)
        writer.append(commitPage.offset)
        writer.append(commitPage.length)
        writer.append(chain)
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

    /// A new version 2 root file's bytes: this root in slot 0, slot 1 empty (zeros), so the
    /// first in-place write goes to slot 1 while slot 0 is durable.
    static func encodeFile(current: RootRecord) -> [UInt8] {
        var bytes = current.encodedSlot()
        bytes.append(contentsOf: [UInt8](repeating: 0, count: fileSize - slotSize))
        return bytes
    }

    /// Where `slot` starts in a root file of `fileLength` bytes: a version 1 file is exactly
    /// ``versionOneFileSize`` bytes, with adjacent slots; any other length is read as the
    /// version 2 layout (a file cut short then lacks slot 1, or has it only in part).
    static func slotOffset(_ slot: Int, fileLength: Int) -> Int {
        slot * (isVersionOneLayout(fileLength: fileLength) ? slotSize : slotStride)
    }

    /// True if a root file of `fileLength` bytes has the version 1 layout.
    static func isVersionOneLayout(fileLength: Int) -> Bool { fileLength == versionOneFileSize }

    /// True if the slot was never written: slot 1 holding 128 zero bytes (a new or just
    /// upgraded store). Slot 0 is written when the root file is, so it is never empty, and
    /// a slot the file does not wholly hold (a file cut short) is damaged, not empty
    /// (Docs/Format.md §8).
    static func slotIsEmpty(_ bytes: [UInt8], slot: Int) -> Bool {
        let base = slotOffset(slot, fileLength: bytes.count)
        guard slot == 1, bytes.count >= base + slotSize else { return false }
        return bytes[base..<(base + slotSize)].allSatisfy { $0 == 0 }
    }

    /// Decodes one slot of a root file's bytes (either layout); throws a corruption error
    /// naming `file` and the slot's offset.
    static func decodeSlot(_ bytes: [UInt8], slot: Int, file: String) throws(StorageError) -> RootRecord {
        let base = slotOffset(slot, fileLength: bytes.count)
        // Once the slot's bytes are in hand, every error names its stored and computed checksum.
        var checksums: (stored: UInt32, actual: UInt32)? = nil
        func corrupt(_ detail: String) -> StorageError {
            .corruption(
                Corruption(
                    file: file, offset: UInt64(base), detail: "root slot \(slot): \(detail)",
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
        // A root file's layout and its slots' version go together: no writer puts a version 2
        // or 3 slot in a 256-byte file or a version 1 slot in a 4224-byte one. A mismatch is a
        // file cut or spliced, and a later slot read as version 1 would be opened without
        // following the runs after it (Docs/Format.md §8).
        let versionOneLayout = isVersionOneLayout(fileLength: bytes.count)
        guard (version == 1) == versionOneLayout else {
            let layout = versionOneLayout ? "version 1" : "version 2 or 3"
            throw corrupt("format version \(version) in a \(layout) root file (\(bytes.count) bytes)")
        }
        guard slotBytes.littleEndianUInt32(at: 12) == UInt32(slotSize) else { throw corrupt("unexpected slot length") }
        let commitPage = PageAddress(
            offset: slotBytes.littleEndianUInt64(at: 40), length: slotBytes.littleEndianUInt32(at: 48))
        let catalogRoot = PageAddress(
            offset: slotBytes.littleEndianUInt64(at: 56), length: slotBytes.littleEndianUInt32(at: 64))
        let committedLength = slotBytes.littleEndianUInt64(at: 32)
        guard commitPage.offset >= UInt64(SnapshotHeader.size), commitPage.ends(atOrBefore: committedLength),
            commitPage.end == committedLength, catalogRoot.isNone || catalogRoot.ends(atOrBefore: commitPage.offset)
        else {
            throw corrupt("inconsistent page addresses")
        }
        let previousFile = slotBytes.littleEndianUInt64(at: 88)
        let previous =
            previousFile == 0
            ? nil
            : CommitLocation(
                fileNumber: previousFile,
                address: PageAddress(
                    offset: slotBytes.littleEndianUInt64(at: 96), length: slotBytes.littleEndianUInt32(at: 104)))
        return RootRecord(
            generation: slotBytes.littleEndianUInt64(at: 16),
            snapshotFile: slotBytes.littleEndianUInt64(at: 24),
            committedLength: committedLength, commitPage: commitPage, catalogRoot: catalogRoot,
            liveBytes: slotBytes.littleEndianUInt64(at: 72), timestamp: slotBytes.littleEndianUInt64(at: 80),
            previous: previous, chain: version >= 2 ? slotBytes.littleEndianUInt32(at: 52) : 0,
            formatVersion: version)
    }
}
