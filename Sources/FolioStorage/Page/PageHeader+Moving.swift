/// The checksum of a page copied to another offset with a new header, computed from the
/// page's stored checksum instead of a second pass over its bytes: what lets compaction,
/// backup and restore copy an unchanged page for the cost of one checksum check (the
/// read's) rather than two.
///
/// Why it is exact: the checksum is CRC-32C of `offset ‖ bytes[4 ..< length]` (Format.md
/// §4), and the register update is linear over GF(2) (``CRC32C/shift(_:byZeroBytes:)``), so
/// for two messages `m` and `m'` of the same length, `crc(m') = crc(m) ⊕ update(0, m ⊕ m')`.
/// A moved page differs from its source only in the offset (message bytes 0-7) and the
/// header's bytes 4-23 (message bytes 8-27); past those, `m ⊕ m'` is zeros, which a shift
/// crosses without reading.
extension PageHeader {
    /// The checksum of a page whose bytes 24 and on are those of `page` (a page whose stored
    /// checksum is valid at `sourceOffset`), whose header bytes 4-23 are `header`, and which
    /// lives at `offset`.
    static func checksum(
        movedFrom page: UnsafeRawBufferPointer, at sourceOffset: UInt64,
        header: UnsafeRawBufferPointer, to offset: UInt64, shifter: inout CRC32CShifter
    ) -> UInt32 {
        precondition(page.count >= size && header.count == size - 4, "a moved page keeps its body and length")
        let stored = UInt32(littleEndian: page.loadUnaligned(as: UInt32.self))
        let difference = withUnsafeTemporaryAllocation(byteCount: 8 + size - 4, alignment: 8) { delta in
            delta.storeBytes(of: (sourceOffset ^ offset).littleEndian, as: UInt64.self)
            for index in 0..<(size - 4) { delta[8 + index] = page[4 + index] ^ header[index] }
            return CRC32C.update(0, UnsafeRawBufferPointer(delta))
        }
        return stored ^ shifter.shift(difference, byZeroBytes: page.count - size)
    }
}
