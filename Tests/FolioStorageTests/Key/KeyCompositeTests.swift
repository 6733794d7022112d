import FolioTestSupport
import FolioStorage
import Testing

@Suite("Key encoding: composite keys (tuples)")
struct KeyCompositeTests {
    /// First components chosen to collide often and to include strings that are prefixes of each
    /// other's bytes ("a", "a\0", "a\0b", "ab"), where a non-prefix-free encoding would misorder.
    static let names = ["", "\0", "a", "a\0", "a\0b", "a\u{1}", "ab", "b", "é", "e\u{301}x", "\u{FFFF}", "\u{10FFFF}"]

    @Test(
        "40,000 random (String, Int64) and (Int?, Double, Bool) pairs, first components often tied, sort in tuple order"
    )
    func tupleOrder() {
        var rng = SplitMix64(seed: 0x7_0B1E)
        var log = KeyPropertyLog()
        for _ in 0..<20_000 {
            let a = (rng.pick(Self.names), rng.interestingInt64())
            let b = (rng.pick(Self.names), rng.chance(1, in: 4) ? a.1 : rng.interestingInt64())
            let first = normalizedOrder(a.0, b.0)
            let expected = first != 0 ? first : swiftOrder(a.1, b.1)
            let keyA = KeyEncoding.encode(a.0, a.1), keyB = KeyEncoding.encode(b.0, b.1)
            log.check(
                KeyBytes.compare(keyA, keyB) == expected,
                "\(a) vs \(b): expected \(expected), keys [\(hex(keyA))] [\(hex(keyB))]")

            let c: (Int?, Double, Bool) = (
                rng.chance(1, in: 3) ? nil : rng.index(3), Double(rng.index(3)) - 1, rng.chance(1, in: 2)
            )
            let d: (Int?, Double, Bool) = (
                rng.chance(1, in: 3) ? nil : rng.index(3), Double(rng.index(3)) - 1, rng.chance(1, in: 2)
            )
            var expectedCD = optionalOrder(c.0, d.0, swiftOrder)
            if expectedCD == 0 { expectedCD = keyOrder(c.1, d.1) }
            if expectedCD == 0 { expectedCD = swiftOrder(c.2 ? 1 : 0, d.2 ? 1 : 0) }
            let keyC = KeyEncoding.encode(c.0, c.1, c.2), keyD = KeyEncoding.encode(d.0, d.1, d.2)
            log.check(KeyBytes.compare(keyC, keyD) == expectedCD, "\(c) vs \(d): expected \(expectedCD)")
        }
        log.expectNoFailures()
    }

    @Test("The parameter-pack API equals appending components one by one, and decodes back")
    func packAPI() throws {
        var encoder = KeyEncoder()
        encoder.append("user")
        encoder.append(Int32(-7))
        encoder.append(Double?.some(2.5))
        encoder.append([0x00, 0x01] as [UInt8])
        let key = KeyEncoding.encode("user", Int32(-7), Double?.some(2.5), [0x00, 0x01] as [UInt8])
        #expect(key == encoder.bytes)

        let (name, id, score, blob) = try KeyEncoding.decode(
            key, as: String.self, Int32.self, Double?.self, [UInt8].self)
        #expect(name == "user" && id == -7 && score == 2.5 && blob == [0x00, 0x01])

        var decoder = KeyDecoder(key)
        #expect(try decoder.decode(String.self) == "user")
        #expect(try decoder.decode(Int64.self) == -7)  // any signed width reads the same bytes
        #expect(!decoder.isAtEnd)
        #expect(try decoder.decode(Double?.self) == 2.5)
        #expect(try decoder.decode([UInt8].self) == [0x00, 0x01])
        #expect(decoder.isAtEnd)

        // Too few types leaves bytes over; too many runs out of bytes. Both are invalidKey.
        #expect(throws: StorageError.self) { try KeyEncoding.decode(key, as: String.self, Int32.self) }
        #expect(throws: StorageError.self) {
            try KeyEncoding.decode(key, as: String.self, Int32.self, Double?.self, [UInt8].self, Bool.self)
        }
        #expect(KeyEncoding.encode() == [])
    }

    @Test("Random tuples round-trip through KeyEncoding.decode (prefix-freeness lets each component find its end)")
    func roundTrip() throws {
        var rng = SplitMix64(seed: 29)
        var log = KeyPropertyLog()
        for _ in 0..<10_000 {
            let a = rng.interestingString(maxScalars: 4), b = rng.interestingBytes(), c = rng.interestingInt64()
            let d: String? = rng.chance(1, in: 2) ? nil : rng.interestingString(maxScalars: 3)
            let bytes = KeyEncoding.encode(a, b, c, d)
            do {
                let (x, y, z, w) = try KeyEncoding.decode(
                    bytes, as: String.self, [UInt8].self, Int64.self, String?.self)
                log.check(x == a && y == b && z == c && w == d, "\((a, b, c, d)) decoded as \((x, y, z, w))")
            } catch {
                log.check(false, "\((a, b, c, d)) failed to decode: \(error)")
            }
        }
        log.expectNoFailures()
    }

    @Test("A prefix range [encode(a), prefixUpperBound(encode(a))) holds exactly the keys whose first component is a")
    func prefixRanges() throws {
        var rng = SplitMix64(seed: 31)
        var keys: [[UInt8]] = []
        for _ in 0..<3_000 {
            keys.append(KeyEncoding.encode(rng.pick(Self.names), rng.interestingInt64()))
        }
        keys.sort { KeyBytes.compare($0, $1) < 0 }
        for name in Self.names {
            let lower = KeyEncoding.encode(name)
            let upper = KeyBytes.prefixUpperBound(lower)
            let inRange = keys.filter { key in
                KeyBytes.compare(key, lower) >= 0 && (upper.map { KeyBytes.compare(key, $0) < 0 } ?? true)
            }
            var matching: [[UInt8]] = []
            for key in keys {
                var decoder = KeyDecoder(key)
                if try decoder.decode(String.self) == name {
                    matching.append(key)
                }
            }
            #expect(!matching.isEmpty)
            #expect(
                inRange == matching,
                "range for \(name.debugDescription) holds \(inRange.count) keys, \(matching.count) have that first component"
            )
        }
    }
}
