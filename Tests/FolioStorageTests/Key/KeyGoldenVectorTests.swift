import Foundation
import FolioStorage
import Testing

/// The worked examples of Docs/Keys.md. These bytes are the on-disk format: if one of these
/// tests fails, either the encoder is broken or the format changed (which needs a format version
/// bump and a migration, not an edit to this file).
@Suite("Key encoding: golden vectors from Docs/Keys.md")
struct KeyGoldenVectorTests {
    private func bytes(_ hex: String) -> [UInt8] {
        hex.split(separator: " ").map { UInt8($0, radix: 16)! }
    }

    @Test("Bool and integers")
    func integers() {
        #expect(key(false) == bytes("00"))
        #expect(key(true) == bytes("01"))
        #expect(key(Int64(0)) == bytes("80 00 00 00 00 00 00 00"))
        #expect(key(Int8(5)) == bytes("80 00 00 00 00 00 00 05"))
        #expect(key(Int64(5)) == bytes("80 00 00 00 00 00 00 05"))
        #expect(key(Int16(-1)) == bytes("7f ff ff ff ff ff ff ff"))
        #expect(key(Int.min) == bytes("00 00 00 00 00 00 00 00"))
        #expect(key(Int.max) == bytes("ff ff ff ff ff ff ff ff"))
        #expect(key(Int32(-256)) == bytes("7f ff ff ff ff ff ff 00"))
        #expect(key(UInt8(1)) == bytes("00 00 00 00 00 00 00 01"))
        #expect(key(UInt64.max) == bytes("ff ff ff ff ff ff ff ff"))
        #expect(key(UInt32(0x0102_0304)) == bytes("00 00 00 00 01 02 03 04"))
    }

    @Test("Double, Float and Date")
    func floatingPoint() {
        #expect(key(0.0) == bytes("80 00 00 00 00 00 00 00"))
        #expect(key(-0.0) == bytes("80 00 00 00 00 00 00 00"))
        #expect(key(1.0) == bytes("bf f0 00 00 00 00 00 00"))
        #expect(key(-1.0) == bytes("40 0f ff ff ff ff ff ff"))
        #expect(key(2.5) == bytes("c0 04 00 00 00 00 00 00"))
        #expect(key(Double.leastNonzeroMagnitude) == bytes("80 00 00 00 00 00 00 01"))
        #expect(key(-Double.leastNonzeroMagnitude) == bytes("7f ff ff ff ff ff ff fe"))
        #expect(key(Double.infinity) == bytes("ff f0 00 00 00 00 00 00"))
        #expect(key(-Double.infinity) == bytes("00 0f ff ff ff ff ff ff"))
        #expect(key(Double.nan) == bytes("ff f8 00 00 00 00 00 00"))
        #expect(key(-Double.signalingNaN) == bytes("ff f8 00 00 00 00 00 00"))
        #expect(key(Float(1.5)) == bytes("bf f8 00 00 00 00 00 00"))
        #expect(key(Float.nan) == bytes("ff f8 00 00 00 00 00 00"))
        #expect(key(Date(timeIntervalSinceReferenceDate: 0)) == bytes("80 00 00 00 00 00 00 00"))
        #expect(key(Date(timeIntervalSinceReferenceDate: -1)) == bytes("40 0f ff ff ff ff ff ff"))
    }

    @Test("String, byte strings and UUID")
    func strings() {
        #expect(key("") == bytes("00 01"))
        #expect(key("a") == bytes("61 00 01"))
        #expect(key("a\0b") == bytes("61 00 ff 62 00 01"))
        #expect(key("e\u{301}") == bytes("c3 a9 00 01"))
        #expect(key("\u{212B}") == bytes("c3 85 00 01"))
        #expect(key("\u{F73}") == bytes("e0 bd b1 e0 bd b2 00 01"))
        #expect(key("\u{1611E}\u{1611E}") == bytes("f0 96 84 a1 00 01"))
        #expect(key("😀") == bytes("f0 9f 98 80 00 01"))
        #expect(key([] as [UInt8]) == bytes("00 01"))
        #expect(key([0x00, 0xFF] as [UInt8]) == bytes("00 ff ff 00 01"))
        #expect(key(Data([0x00, 0x01])) == bytes("00 ff 01 00 01"))
        #expect(
            key(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!)
                == bytes("00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff"))
    }

    @Test("Optional and tuples")
    func composites() {
        #expect(key(Int?.none) == bytes("00"))
        #expect(key(Int?.some(1)) == bytes("01 80 00 00 00 00 00 00 01"))
        #expect(key(String??.some(.none)) == bytes("01 00"))
        #expect(KeyEncoding.encode("a", Int64(1)) == bytes("61 00 01 80 00 00 00 00 00 00 01"))
        #expect(KeyEncoding.encode(true, "", Double?.none) == bytes("01 00 01 00"))
        #expect(KeyBytes.prefixUpperBound(KeyEncoding.encode("a")) == bytes("61 00 02"))
    }
}
