/// What the catalog records for one named tree (Docs/Format.md §9): its root page, height,
/// number of keys and the bytes of pages (overflow pages included) it owns.
public struct TreeDescriptor: Sendable, Equatable {
    /// The root page, or ``PageAddress/none`` for an empty tree.
    public var root: PageAddress
    /// Levels from root to leaves (1: the root is a leaf; 0: empty).
    public var depth: Int
    /// Number of keys.
    public var count: UInt64
    /// Bytes of all pages reachable from `root`.
    public var bytes: UInt64

    /// A descriptor with the given fields.
    public init(root: PageAddress, depth: Int, count: UInt64, bytes: UInt64) {
        self.root = root
        self.depth = depth
        self.count = count
        self.bytes = bytes
    }

    static let empty = TreeDescriptor(root: .none, depth: 0, count: 0, bytes: 0)
    static let encodedSize = 40

    /// 40 bytes: u8 version (1), u8 depth, u16 0, u32 root length, u64 root offset,
    /// u64 count, u64 bytes, u64 0.
    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.encodedSize)
        writer.append(UInt8(1))
        writer.append(UInt8(truncatingIfNeeded: depth))
        writer.append(UInt16(0))
        writer.append(root.length)
        writer.append(root.offset)
        writer.append(count)
        writer.append(bytes)
        writer.append(UInt64(0))
        return writer.bytes
    }

    static func decode(
        _ bytes: [UInt8], tree: String, file: String, offset: UInt64
    ) throws(StorageError) -> TreeDescriptor {
        guard bytes.count == encodedSize, bytes[0] == 1 else {
            throw .corruption(
                Corruption(file: file, offset: offset, detail: "catalog entry for \"\(tree)\" is malformed"))
        }
        return TreeDescriptor(
            root: PageAddress(offset: bytes.littleEndianUInt64(at: 8), length: bytes.littleEndianUInt32(at: 4)),
            depth: Int(bytes[1]), count: bytes.littleEndianUInt64(at: 16),
            bytes: bytes.littleEndianUInt64(at: 24))
    }
}
