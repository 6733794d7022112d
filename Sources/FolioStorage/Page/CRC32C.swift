/// CRC-32C (Castagnoli), the checksum on every page, root slot and file header.
///
/// Castagnoli rather than the zlib CRC-32 because it detects more error patterns in the
/// block sizes a store writes, and it is what iSCSI, ext4 and LevelDB use. Software
/// slicing-by-8: eight table lookups per eight input bytes. Check value: the bytes of
/// "123456789" give 0xE3069283.
@_spi(Testing) public enum CRC32C {
    /// The checksum of `bytes`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        ~update(0xFFFF_FFFF, bytes)
    }

    /// The checksum of `bytes`.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// Continues a running (pre-inverted) CRC over more bytes. Start from `0xFFFF_FFFF` and
    /// invert the result at the end, or use ``checksum(_:)-(UnsafeRawBufferPointer)``.
    @inlinable
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = crc
        var index = 0
        let count = bytes.count
        CRC32CTables.tables.withUnsafeBufferPointer { t in
            while count - index >= 8 {
                let low = bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self).littleEndian ^ crc
                let high = bytes.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self).littleEndian
                crc =
                    t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                    ^ t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
                index += 8
            }
            while index < count {
                crc = t[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        return crc
    }
}

/// The eight 256-entry tables of slicing-by-8 for the reflected polynomial 0x82F63B78.
@usableFromInline
enum CRC32CTables {
    @usableFromInline
    static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for n in 0..<256 {
            var crc = UInt32(n)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[n] = crc
        }
        for n in 0..<256 {
            var crc = tables[n]
            for k in 1..<8 {
                crc = tables[Int(crc & 0xFF)] ^ (crc >> 8)
                tables[k * 256 + n] = crc
            }
        }
        return tables
    }()
}
