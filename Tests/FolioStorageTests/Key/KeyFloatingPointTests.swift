import FolioTestSupport
import FolioStorage
import Testing

/// The total order keys give Doubles: Swift's order on numbers (with -0.0 == +0.0), and every
/// NaN equal to every other NaN and greater than every number (the PostgreSQL policy).
func keyOrder(_ a: Double, _ b: Double) -> Int {
    switch (a.isNaN, b.isNaN) {
    case (true, true): return 0
    case (true, false): return 1
    case (false, true): return -1
    case (false, false): return a < b ? -1 : (a == b ? 0 : 1)
    }
}

@Suite("Key encoding: Double and Float")
struct KeyFloatingPointTests {
    static let doubleEdges: [Double] = [
        -.infinity, -.greatestFiniteMagnitude, -1e300, -1, -.leastNormalMagnitude, -.leastNonzeroMagnitude,
        -0.0, 0.0, .leastNonzeroMagnitude, .leastNormalMagnitude, 1, 1e300, .greatestFiniteMagnitude, .infinity,
        .nan, -.nan, .signalingNaN, -.signalingNaN, Double(nan: 0x1234, signaling: false),
        Double(nan: 7, signaling: true),
        Double(bitPattern: 0xFFFF_FFFF_FFFF_FFFF), Double(bitPattern: 0x7FF0_0000_0000_0001),
        1.0.nextUp, 1.0.nextDown, (-1.0).nextUp, (-1.0).nextDown,
    ]

    static let floatEdges: [Float] = [
        -.infinity, -.greatestFiniteMagnitude, -1, -.leastNormalMagnitude, -.leastNonzeroMagnitude,
        -0.0, 0.0, .leastNonzeroMagnitude, .leastNormalMagnitude, 1, .greatestFiniteMagnitude, .infinity,
        .nan, -.nan, .signalingNaN, -.signalingNaN, Float(nan: 0x123, signaling: false), Float(bitPattern: 0xFFFF_FFFF),
        Float(1).nextUp, Float(1).nextDown,
    ]

    @Test("Edge Doubles (infinities, extremes, subnormals, both zeros, NaN variants) sort in key order (all pairs)")
    func doubleEdgeValues() {
        var log = KeyPropertyLog()
        for a in Self.doubleEdges {
            for b in Self.doubleEdges {
                log.checkPair(a, b, expected: keyOrder(a, b))
            }
        }
        log.expectNoFailures()
        // The policy, spelled out.
        #expect(key(-0.0) == key(0.0))
        #expect(key(Double.nan) == key(-Double.nan))
        #expect(key(Double.nan) == key(Double.signalingNaN))
        #expect(KeyBytes.compare(key(Double.infinity), key(Double.nan)) < 0)
        #expect(KeyBytes.compare(key(-Double.infinity), key(-Double.nan)) < 0)
    }

    @Test("60,000 random Double pairs (any bit pattern, NaNs, subnormals, neighbours) sort in key order")
    func doubleRandomPairs() {
        var rng = SplitMix64(seed: 0xD0_0B1E)
        var log = KeyPropertyLog()
        for _ in 0..<60_000 {
            let a = rng.interestingDouble()
            let b: Double
            switch rng.index(4) {
            case 0: b = a.nextUp
            case 1: b = a.nextDown
            case 2: b = -a
            default: b = rng.interestingDouble()
            }
            log.checkPair(a, b, expected: keyOrder(a, b))
        }
        log.expectNoFailures()
    }

    @Test("Float edges and 30,000 random Float pairs sort in key order, and a Float's key is its Double's key")
    func floats() {
        var log = KeyPropertyLog()
        for a in Self.floatEdges {
            for b in Self.floatEdges {
                log.checkPair(a, b, expected: keyOrder(Double(a), Double(b)))
            }
        }
        var rng = SplitMix64(seed: 0xF10A7)
        for _ in 0..<30_000 {
            let a = Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()))
            let b = rng.chance(1, in: 3) ? a.nextUp : Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()))
            log.checkPair(a, b, expected: keyOrder(Double(a), Double(b)))
            log.check(key(a) == key(Double(a)), "Float \(a) and Double \(Double(a)) have different keys")
        }
        log.expectNoFailures()
    }

    @Test(
        "Round trip: values decode exactly; -0.0 decodes to +0.0; NaN decodes to a NaN; Float rejects non-Float doubles"
    )
    func roundTrip() throws {
        var log = KeyPropertyLog()
        var rng = SplitMix64(seed: 11)
        for value in Self.doubleEdges + (0..<20_000).map({ _ in rng.interestingDouble() }) {
            if value.isNaN {
                log.checkRoundTrip(value) { $0.isNaN }
            } else if value == 0 {
                log.checkRoundTrip(value) { $0 == 0 && $0.sign == .plus }
            } else {
                log.checkRoundTrip(value) { $0.bitPattern == value.bitPattern }
            }
        }
        for value in Self.floatEdges
            + (0..<10_000).map({ _ in Float(bitPattern: UInt32(truncatingIfNeeded: rng.next())) })
        {
            if value.isNaN {
                log.checkRoundTrip(value) { $0.isNaN }
            } else if value == 0 {
                log.checkRoundTrip(value) { $0 == 0 && $0.sign == .plus }
            } else {
                log.checkRoundTrip(value) { $0.bitPattern == value.bitPattern }
            }
        }
        log.expectNoFailures()
        #expect(throws: StorageError.self) { try decodeWhole(Float.self, key(0.1 as Double)) }
        #expect(throws: StorageError.self) { try decodeWhole(Float.self, key(Double.greatestFiniteMagnitude)) }
        // The two patterns the encoder never writes are rejected: -0.0 and a non-canonical NaN.
        #expect(throws: StorageError.self) {
            try decodeWhole(Double.self, [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        }
        #expect(throws: StorageError.self) { try decodeWhole(Double.self, [0xFF, 0xF8, 0, 0, 0, 0, 0, 1]) }
        #expect(throws: StorageError.self) {
            try decodeWhole(Double.self, [0x00, 0x07, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        }
    }
}
