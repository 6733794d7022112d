import FolioTestSupport
import FolioStorage
import Testing

/// Key order of optionals: nil first, then the wrapped values in their order.
func optionalOrder<T>(_ a: T?, _ b: T?, _ wrapped: (T, T) -> Int) -> Int {
    switch (a, b) {
    case (nil, nil): return 0
    case (nil, _): return -1
    case (_, nil): return 1
    case (let x?, let y?): return wrapped(x, y)
    }
}

@Suite("Key encoding: Optional")
struct KeyOptionalTests {
    @Test("nil sorts before every value, including Int.min, \"\" and false; 30,000 random pairs keep order")
    func order() {
        #expect(key(Int?.none) == [0x00])
        #expect(KeyBytes.compare(key(Int?.none), key(Int?.some(.min))) < 0)
        #expect(KeyBytes.compare(key(String?.none), key(String?.some(""))) < 0)
        #expect(KeyBytes.compare(key(Bool?.none), key(Bool?.some(false))) < 0)
        var rng = SplitMix64(seed: 0x0B7)
        var log = KeyPropertyLog()
        for _ in 0..<15_000 {
            let a: Int64? = rng.chance(1, in: 4) ? nil : rng.interestingInt64()
            let b: Int64? = rng.chance(1, in: 4) ? nil : (rng.chance(1, in: 3) ? a : rng.interestingInt64())
            log.checkPair(a, b, expected: optionalOrder(a, b, swiftOrder))
            let c: String? = rng.chance(1, in: 4) ? nil : rng.interestingString(maxScalars: 3)
            let d: String? = rng.chance(1, in: 4) ? nil : rng.interestingString(maxScalars: 3)
            log.checkPair(c, d, expected: optionalOrder(c, d, normalizedOrder))
        }
        log.expectNoFailures()
    }

    @Test("Nested optionals are distinct and ordered: nil < some(nil) < some(some(false)) < some(some(true))")
    func nested() throws {
        let values: [Bool??] = [.none, .some(.none), .some(.some(false)), .some(.some(true))]
        for (i, a) in values.enumerated() {
            for (j, b) in values.enumerated() {
                #expect(KeyBytes.compare(key(a), key(b)) == (i < j ? -1 : (i == j ? 0 : 1)))
            }
            #expect(try decodeWhole(Bool??.self, key(a)) == a)
        }
        #expect(key(Bool??.some(.none)) == [0x01, 0x00])
    }

    @Test("Round trip; a tag other than 0x00/0x01 is rejected")
    func roundTrip() {
        var rng = SplitMix64(seed: 23)
        var log = KeyPropertyLog()
        for _ in 0..<5_000 {
            let value: Double? = rng.chance(1, in: 3) ? nil : Double(rng.interestingInt64())
            log.checkRoundTrip(value) { $0 == value }
        }
        log.expectNoFailures()
        #expect(throws: StorageError.self) { try decodeWhole(Int?.self, [0x02]) }
        #expect(throws: StorageError.self) { try decodeWhole(Int?.self, [0x01]) }
    }
}
