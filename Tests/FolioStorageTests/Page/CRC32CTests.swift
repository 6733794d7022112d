import Testing
@_spi(Testing) @testable import FolioStorage
import FolioTestSupport

/// The table-driven CRC-32C, which reads long inputs as two streams joined by a shift,
/// equals the bit-at-a-time definition for every length and starting register: a wrong
/// table, a wrong join or a wrong tail would make every page fail its check.
@Suite struct CRC32CTests {
    /// The definition: one bit at a time, reflected polynomial 0x82F63B78.
    static func bitwise(_ register: UInt32, _ bytes: [UInt8]) -> UInt32 {
        var crc = register
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return crc
    }

    @Test func checkValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    }

    /// Every length up to past twice the two-stream threshold, and longer ones, from random
    /// registers: each tail length (0-15 bytes past the last 16-byte step) on each side of
    /// the threshold, and odd halves.
    @Test func equalsTheBitwiseDefinition() {
        var random = SplitMix64(seed: 91)
        var lengths = Array(0...(2 * CRC32C.twoStreamMinimum + 40))
        lengths += [4_095, 4_096, 4_097, 8_191, 65_537, 100_003, CRC32C.twoStreamTable - 1, CRC32C.twoStreamTable + 17]
        for length in lengths {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let register = UInt32(truncatingIfNeeded: random.next())
            let computed = bytes.withUnsafeBytes { CRC32C.update(register, $0) }
            #expect(computed == Self.bitwise(register, bytes), "length \(length)")
        }
    }

    /// Continuing over pieces equals one update over the whole, however it is cut.
    @Test func continuingOverPiecesEqualsOneUpdate() {
        var random = SplitMix64(seed: 5)
        let bytes = (0..<20_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let whole = bytes.withUnsafeBytes { CRC32C.update(0xFFFF_FFFF, $0) }
        for _ in 0..<50 {
            let cut = Int(random.next() % UInt64(bytes.count))
            let pieces = bytes.withUnsafeBytes { raw in
                CRC32C.update(
                    CRC32C.update(0xFFFF_FFFF, UnsafeRawBufferPointer(rebasing: raw[..<cut])),
                    UnsafeRawBufferPointer(rebasing: raw[cut...]))
            }
            #expect(pieces == whole, "cut at \(cut)")
        }
    }
}
