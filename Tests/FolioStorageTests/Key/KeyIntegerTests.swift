import FolioTestSupport
import FolioStorage
import Testing

@Suite("Key encoding: Bool and integers")
struct KeyIntegerTests {
    /// Checks every ordered pair of `values` (sorted ascending by the caller's intent is not
    /// assumed: the expected order comes from Swift's comparison).
    private func checkAllPairs<T: KeyComponent & Comparable>(_ values: [T], _ log: inout KeyPropertyLog) {
        for a in values {
            for b in values {
                log.checkPair(a, b, expected: swiftOrder(a, b))
            }
        }
    }

    @Test("Bool: false < true, one byte each, and only 0x00/0x01 decode")
    func bool() throws {
        #expect(key(false) == [0x00])
        #expect(key(true) == [0x01])
        #expect(KeyBytes.compare(key(false), key(true)) < 0)
        #expect(try decodeWhole(Bool.self, [0x01]) == true)
        #expect(throws: StorageError.self) { try decodeWhole(Bool.self, [0x02]) }
    }

    @Test("Edge values of every signed and unsigned width sort as the integers do (all pairs)")
    func edgeValues() {
        var log = KeyPropertyLog()
        checkAllPairs(
            [Int.min, Int.min + 1, -256, -129, -128, -2, -1, 0, 1, 2, 127, 128, 255, 256, Int.max - 1, Int.max], &log)
        checkAllPairs([Int64.min, -1, 0, 1, Int64.max], &log)
        checkAllPairs([Int32.min, Int32.min + 1, -1, 0, 1, Int32.max - 1, Int32.max], &log)
        checkAllPairs([Int16.min, -1, 0, 1, Int16.max], &log)
        checkAllPairs([Int8.min, Int8.min + 1, -1, 0, 1, Int8.max - 1, Int8.max], &log)
        checkAllPairs(
            [UInt.min, 1, 127, 128, 255, 256, UInt(Int.max), UInt(Int.max) + 1, UInt.max - 1, UInt.max], &log)
        checkAllPairs([UInt64.min, 1, UInt64(1) << 63, UInt64.max], &log)
        checkAllPairs([UInt32.min, 1, UInt32.max], &log)
        checkAllPairs([UInt16.min, 1, 0x00FF, 0x0100, UInt16.max], &log)
        checkAllPairs([UInt8.min, 1, 0x7F, 0x80, UInt8.max], &log)
        log.expectNoFailures()
    }

    @Test(
        "Random pairs of every width sort as the integers do (30,000 Int/Int64/UInt/UInt64, 20,000 per narrower width, every 8-bit value)"
    )
    func randomPairs() {
        var rng = SplitMix64(seed: 0x1D5E_C0DE)
        var log = KeyPropertyLog()
        for _ in 0..<30_000 {
            let a = rng.interestingInt64()
            let b =
                rng.chance(1, in: 8)
                ? a : (rng.chance(1, in: 2) ? rng.interestingInt64() : a &+ Int64(rng.index(5)) &- 2)
            log.checkPair(a, b, expected: swiftOrder(a, b))
            log.checkPair(Int(a), Int(b), expected: swiftOrder(a, b))
            let c = rng.interestingUInt64()
            let d = rng.chance(1, in: 8) ? c : rng.interestingUInt64()
            log.checkPair(c, d, expected: swiftOrder(c, d))
            log.checkPair(UInt(c), UInt(d), expected: swiftOrder(c, d))
        }
        for _ in 0..<20_000 {
            let a = Int32(truncatingIfNeeded: rng.interestingInt64()),
                b = Int32(truncatingIfNeeded: rng.interestingInt64())
            log.checkPair(a, b, expected: swiftOrder(a, b))
            let c = Int16(truncatingIfNeeded: rng.next()), d = Int16(truncatingIfNeeded: rng.next())
            log.checkPair(c, d, expected: swiftOrder(c, d))
            let e = UInt32(truncatingIfNeeded: rng.interestingUInt64()),
                f = UInt32(truncatingIfNeeded: rng.interestingUInt64())
            log.checkPair(e, f, expected: swiftOrder(e, f))
            let g = UInt16(truncatingIfNeeded: rng.next()), h = UInt16(truncatingIfNeeded: rng.next())
            log.checkPair(g, h, expected: swiftOrder(g, h))
        }
        // Every 8-bit value against its neighbours (where a dropped sign flip or a byte-order
        // mistake shows first) and against eight random partners.
        for a in Int8.min...Int8.max {
            for b in [a, a &+ 1, a &- 1, a &+ 2, Int8.min, Int8.max]
                + (0..<8).map({ _ in Int8(truncatingIfNeeded: rng.next()) })
            {
                log.checkPair(a, b, expected: swiftOrder(a, b))
            }
        }
        for a in UInt8.min...UInt8.max {
            for b in [a, a &+ 1, a &- 1, a &+ 2, UInt8.min, UInt8.max]
                + (0..<8).map({ _ in UInt8(truncatingIfNeeded: rng.next()) })
            {
                log.checkPair(a, b, expected: swiftOrder(a, b))
            }
        }
        log.expectNoFailures()
    }

    @Test("A value has the same key at every width (Int8(5) == Int64(5)), so widening a key type keeps its order")
    func widthIndependence() {
        var log = KeyPropertyLog()
        for value in Int8.min...Int8.max {
            let wide = key(Int64(value))
            log.check(
                key(value) == wide && key(Int16(value)) == wide && key(Int32(value)) == wide && key(Int(value)) == wide,
                "Int8 \(value) has width-dependent keys")
        }
        for value in UInt8.min...UInt8.max {
            let wide = key(UInt64(value))
            log.check(
                key(value) == wide && key(UInt16(value)) == wide && key(UInt32(value)) == wide
                    && key(UInt(value)) == wide,
                "UInt8 \(value) has width-dependent keys")
        }
        var rng = SplitMix64(seed: 77)
        for _ in 0..<10_000 {
            let value = Int32(truncatingIfNeeded: rng.next())
            log.check(key(value) == key(Int64(value)), "Int32 \(value) differs from Int64")
        }
        log.expectNoFailures()
    }

    @Test("Round trip: every width decodes its own keys; narrowing rejects out-of-range values with invalidKey")
    func roundTrip() throws {
        var rng = SplitMix64(seed: 3)
        var log = KeyPropertyLog()
        for _ in 0..<10_000 {
            let value = rng.interestingInt64()
            log.checkRoundTrip(value) { $0 == value }
            log.checkRoundTrip(Int(value)) { $0 == Int(value) }
            log.checkRoundTrip(Int32(truncatingIfNeeded: value)) { $0 == Int32(truncatingIfNeeded: value) }
            log.checkRoundTrip(Int16(truncatingIfNeeded: value)) { $0 == Int16(truncatingIfNeeded: value) }
            log.checkRoundTrip(Int8(truncatingIfNeeded: value)) { $0 == Int8(truncatingIfNeeded: value) }
            let unsigned = rng.interestingUInt64()
            log.checkRoundTrip(unsigned) { $0 == unsigned }
            log.checkRoundTrip(UInt(unsigned)) { $0 == UInt(unsigned) }
            log.checkRoundTrip(UInt32(truncatingIfNeeded: unsigned)) { $0 == UInt32(truncatingIfNeeded: unsigned) }
            log.checkRoundTrip(UInt16(truncatingIfNeeded: unsigned)) { $0 == UInt16(truncatingIfNeeded: unsigned) }
            log.checkRoundTrip(UInt8(truncatingIfNeeded: unsigned)) { $0 == UInt8(truncatingIfNeeded: unsigned) }
        }
        log.expectNoFailures()
        // A wider value read as a narrower type is an error, not a truncation.
        #expect(try decodeWhole(Int8.self, key(Int64(-128))) == -128)
        #expect(throws: StorageError.self) { try decodeWhole(Int8.self, key(Int64(128))) }
        #expect(throws: StorageError.self) { try decodeWhole(Int8.self, key(Int64(-129))) }
        #expect(throws: StorageError.self) { try decodeWhole(Int32.self, key(Int64(Int32.max) + 1)) }
        #expect(throws: StorageError.self) { try decodeWhole(UInt8.self, key(UInt64(256))) }
        #expect(throws: StorageError.self) { try decodeWhole(UInt16.self, key(UInt64.max)) }
        #expect(throws: StorageError.self) { try decodeWhole(Int.self, [0x80, 0, 0]) }
    }
}
