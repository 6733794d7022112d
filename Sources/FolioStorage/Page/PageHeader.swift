/// Where a page lives in its snapshot file: byte offset and total length (header included).
///
/// Child pointers and overflow references carry the length too, so a page is read with
/// one `pread` and checked against the length its parent expects.
public struct PageAddress: Hashable, Sendable, CustomStringConvertible {
    /// Byte offset of the page's first header byte in the snapshot file.
    public var offset: UInt64
    /// Total length of the page in bytes, header included.
    public var length: UInt32

    /// The page at `offset`, `length` bytes long.
    public init(offset: UInt64, length: UInt32) {
        self.offset = offset
        self.length = length
    }

    /// The null address: an empty tree, or no previous commit. Offset 0 is inside the
    /// snapshot file header, so no page can be there.
    public static let none = PageAddress(offset: 0, length: 0)

    /// True for ``none``.
    public var isNone: Bool { offset == 0 }

    /// One past the page's last byte. Only for addresses the engine made or checked: for
    /// one read from disk use ``ends(atOrBefore:)``, which cannot overflow.
    public var end: UInt64 { offset + UInt64(length) }

    /// True if the whole page lies before `limit` (`end <= limit`), computed without
    /// overflow: a damaged address may hold any offset, and decoders must not trap on it.
    public func ends(atOrBefore limit: UInt64) -> Bool {
        offset <= limit && UInt64(length) <= limit - offset
    }

    public var description: String { isNone ? "none" : "@\(offset)+\(length)" }
}

/// What a page holds (byte 4 of its header).
enum PageKind: UInt8, Sendable {
    /// Sorted keys with inline values or overflow references.
    case leaf = 1
    /// Separator keys and child page addresses.
    case branch = 2
    /// One large value, stored out of line so leaves stay small.
    case overflow = 3
    /// A commit record: the root fields of one generation plus its change record.
    case commit = 4

    var name: String {
        switch self {
        case .leaf: return "leaf"
        case .branch: return "branch"
        case .overflow: return "overflow"
        case .commit: return "commit"
        }
    }
}

/// The 24-byte header every page starts with (Docs/Format.md §4):
///
///     0  u32  CRC-32C of (the page's file offset as u64 LE) ++ bytes[4 ..< length]
///     4  u8   kind
///     5  u8   flags (0)
///     6  u16  entry count (leaf: entries; branch: children; others: 0)
///     8  u32  length of the whole page, header included
///     12 u32  reserved (0)
///     16 u64  generation of the commit that wrote the page
///
/// Folding the offset into the checksum means a valid page copied to another offset (a
/// misdirected write) fails its check, as bbolt does with page ids.
enum PageHeader {
    static let size = 24

    struct Fields {
        var kind: PageKind
        var count: Int
        var generation: UInt64
        /// The page's checksum (stored and computed alike: it matched). Decoders attach it
        /// to the structural errors they find, so every corruption error names it.
        var checksum: UInt32
    }

    /// Starts a page at the end of `writer`; returns its start index for ``seal``.
    static func begin(_ writer: inout ByteWriter, kind: PageKind, count: Int, generation: UInt64) -> Int {
        let start = writer.count
        writer.append(UInt32(0))
        writer.append(kind.rawValue)
        writer.append(UInt8(0))
        writer.append(UInt16(truncatingIfNeeded: count))
        writer.append(UInt32(0))
        writer.append(UInt32(0))
        writer.append(generation)
        return start
    }

    /// Fills in the length and checksum of the page that starts at `start` and runs to the
    /// end of `writer`, for a page that will be written at `fileOffset`.
    static func seal(_ writer: inout ByteWriter, start: Int, fileOffset: UInt64) {
        let length = writer.count - start
        writer.set(UInt32(length), at: start + 8)
        let crc = writer.bytes.withUnsafeBytes { buffer in
            checksum(buffer[(start + 4)..<(start + length)], fileOffset: fileOffset)
        }
        writer.set(crc, at: start)
    }

    static func checksum(_ bytesAfterChecksum: Slice<UnsafeRawBufferPointer>, fileOffset: UInt64) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        withUnsafeBytes(of: fileOffset.littleEndian) { crc = CRC32C.update(crc, $0) }
        crc = CRC32C.update(crc, UnsafeRawBufferPointer(rebasing: bytesAfterChecksum))
        return ~crc
    }

    /// The header fields of a page this process has just sealed (``seal(_:start:fileOffset:)``),
    /// without computing its checksum again: nothing but this process has touched the bytes.
    static func fields(ofSealed bytes: [UInt8]) -> Fields {
        guard let kind = PageKind(rawValue: bytes[4]) else { preconditionFailure("a sealed page has a known kind") }
        return Fields(
            kind: kind, count: Int(UInt16(bytes[6]) | UInt16(bytes[7]) << 8),
            generation: bytes.littleEndianUInt64(at: 16), checksum: bytes.littleEndianUInt32(at: 0))
    }

    /// Checks a page read from `address` of `file`: complete, the length its parent expects,
    /// a matching checksum, a known kind (and the expected one, if given). Never traps on
    /// any input. Every page read goes through here, so a damaged page is a corruption
    /// error naming file and offset, never data (Docs/Architecture.md invariant 3).
    ///
    /// Once the page's bytes are in hand, every error carries the stored and the computed
    /// checksum, whichever check fails first (a damaged length field or a zeroed page fails
    /// the length check before the checksum is compared, but is still reported with both).
    static func validate(
        _ bytes: [UInt8], address: PageAddress, file: String,
        expecting expected: PageKind? = nil
    ) throws(StorageError) -> Fields {
        try bytes.withRawBytes { (raw) throws(StorageError) in
            try validate(raw: raw, address: address, file: file, expecting: expected)
        }
    }

    /// ``validate(_:address:file:expecting:)`` of bytes in place (a window of a larger read).
    static func validate(
        raw bytes: UnsafeRawBufferPointer, address: PageAddress, file: String,
        expecting expected: PageKind? = nil
    ) throws(StorageError) -> Fields {
        func corrupt(_ detail: String, expected: UInt32? = nil, actual: UInt32? = nil) -> StorageError {
            .corruption(
                Corruption(
                    file: file, offset: address.offset, detail: detail,
                    expectedChecksum: expected, actualChecksum: actual))
        }
        guard UInt64(bytes.count) == UInt64(address.length) else {
            throw corrupt("page of \(address.length) bytes expected, only \(bytes.count) bytes in the file")
        }
        guard bytes.count >= size else { throw corrupt("page shorter than its \(size)-byte header") }
        let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
        let actual = checksum(bytes[4...], fileOffset: address.offset)
        let length = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        guard length == address.length else {
            throw corrupt(
                "page header says \(length) bytes, its reference says \(address.length)", expected: stored,
                actual: actual)
        }
        guard stored == actual else { throw corrupt("page checksum mismatch", expected: stored, actual: actual) }
        guard let kind = PageKind(rawValue: bytes[4]) else {
            throw corrupt("unknown page kind \(bytes[4])", expected: stored, actual: actual)
        }
        if let expected, kind != expected {
            throw corrupt(
                "expected a \(expected.name) page, found a \(kind.name) page", expected: stored, actual: actual)
        }
        let count = Int(UInt16(bytes[6]) | UInt16(bytes[7]) << 8)
        let generation = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        return Fields(kind: kind, count: count, generation: generation, checksum: stored)
    }
}
