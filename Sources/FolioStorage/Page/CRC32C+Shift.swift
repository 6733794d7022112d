/// Moving a running CRC-32C past bytes without reading them: the arithmetic that lets a run
/// checksum (Docs/Format.md §7) be continued from each page's own checksum instead of a
/// second pass over the page's bytes.
///
/// Why it is exact: the table-driven register update is linear over GF(2) in the register
/// and the message together, so `update(s, m)` equals `update(s, zeros) ⊕ update(0, m)` for
/// a message `m` of the same length as `zeros`, and `update(s, n zero bytes)` is `s`
/// multiplied by x^(8n) modulo the polynomial (zlib's `crc32_combine` rests on the same
/// identity). Multiplying costs a few hundred instructions, whatever `n` is; reading the
/// bytes again cost about one instruction per byte.
extension CRC32C {
    /// `crc` (a running, pre-inverted register) as it would be after `count` zero bytes.
    @usableFromInline
    static func shift(_ crc: UInt32, byZeroBytes count: Int) -> UInt32 {
        multiply(crc, CRC32CShiftTables.power(ofZeroBytes: count))
    }

    /// The product of `a` and `b` modulo the Castagnoli polynomial, both in the reflected
    /// bit order of the register (bit 31 is x^0).
    @usableFromInline
    static func multiply(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var product: UInt32 = 0
        var a = a
        var b = b
        // Walks a's terms from x^0 (bit 31) upward; b is multiplied by x at each step.
        while a != 0 {
            if a & 0x8000_0000 != 0 { product ^= b }
            a <<= 1
            b = (b & 1) != 0 ? (b >> 1) ^ 0x82F6_3B78 : b >> 1
        }
        return product
    }
}

/// x^(8·d·16^i) modulo the polynomial for every nibble `d` at every position `i` of a byte
/// count below 2^32: at most eight multiplications make x^(8n) for any such count.
@usableFromInline
enum CRC32CShiftTables {
    /// `tables[16 * i + d]` = x^(8 · d · 16^i).
    static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 16)
        // x^8 (one zero byte) in the reflected order: bit 31 - 8.
        var unit: UInt32 = 1 << 23
        for position in 0..<8 {
            var power: UInt32 = 0x8000_0000  // x^0
            for digit in 0..<16 {
                tables[16 * position + digit] = power
                power = CRC32C.multiply(power, unit)
            }
            unit = power  // x^(8 · 16^(position + 1))
        }
        return tables
    }()

    /// x^(8 · count) modulo the polynomial.
    @usableFromInline
    static func power(ofZeroBytes count: Int) -> UInt32 {
        precondition(count >= 0 && count <= Int(UInt32.max), "a CRC shift covers at most 2^32 - 1 bytes")
        var result: UInt32 = 0x8000_0000
        var remaining = UInt32(count)
        var position = 0
        tables.withUnsafeBufferPointer { tables in
            while remaining != 0 {
                let digit = Int(remaining & 0xF)
                if digit != 0 { result = CRC32C.multiply(result, tables[16 * position + digit]) }
                remaining >>= 4
                position += 1
            }
        }
        return result
    }
}

/// ``CRC32C/shift(_:byZeroBytes:)`` for a caller that shifts by the same count again and
/// again (a walk over pages of one length): it keeps the power of the last count, so a
/// repeated shift costs one multiplication instead of up to nine.
struct CRC32CShifter {
    private var count = -1
    private var power: UInt32 = 0

    /// `crc` as it would be after `count` zero bytes.
    mutating func shift(_ crc: UInt32, byZeroBytes count: Int) -> UInt32 {
        if count != self.count {
            (self.count, power) = (count, CRC32CShiftTables.power(ofZeroBytes: count))
        }
        return CRC32C.multiply(crc, power)
    }
}
