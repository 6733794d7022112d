import FolioTestSupport
import FolioStorage
import Testing

@Suite("KeyBytes: raw key comparison and prefix bounds")
struct KeyBytesTests {
    @Test(
        "compare returns -1/0/1 as lexicographic unsigned order with a proper prefix first, for both overloads (50,000 pairs)"
    )
    func compare() {
        #expect(KeyBytes.compare([], []) == 0)
        #expect(KeyBytes.compare([], [0x00]) == -1)
        #expect(KeyBytes.compare([0x00], []) == 1)
        #expect(KeyBytes.compare([0x01], [0x00, 0xFF]) == 1)
        #expect(KeyBytes.compare([0x7F], [0x80]) == -1)  // unsigned, not signed, bytes
        #expect(KeyBytes.compare([0xFF, 0x00], [0xFF]) == 1)
        var rng = SplitMix64(seed: 37)
        var log = KeyPropertyLog()
        for _ in 0..<50_000 {
            let a = rng.interestingBytes(maxLength: 20)
            let b = rng.chance(1, in: 2) ? rng.relatedBytes(a) : rng.interestingBytes(maxLength: 20)
            let expected = a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
            log.check(KeyBytes.compare(a, b) == expected, "compare(\(a), \(b)) != \(expected)")
            let raw = a.withUnsafeBytes { left in b.withUnsafeBytes { right in KeyBytes.compare(left, right) } }
            log.check(raw == expected, "raw compare(\(a), \(b)) != \(expected)")
        }
        log.expectNoFailures()
    }

    @Test("prefixUpperBound: worked examples, and nil when the prefix is empty or all 0xFF")
    func prefixUpperBoundExamples() {
        #expect(KeyBytes.prefixUpperBound([]) == nil)
        #expect(KeyBytes.prefixUpperBound([0xFF]) == nil)
        #expect(KeyBytes.prefixUpperBound([0xFF, 0xFF, 0xFF]) == nil)
        #expect(KeyBytes.prefixUpperBound([0x00]) == [0x01])
        #expect(KeyBytes.prefixUpperBound([0x61, 0x62]) == [0x61, 0x63])
        #expect(KeyBytes.prefixUpperBound([0x61, 0xFF]) == [0x62])
        #expect(KeyBytes.prefixUpperBound([0x01, 0xFF, 0xFF]) == [0x02])
        #expect(KeyBytes.prefixUpperBound([0xFE, 0xFF]) == [0xFF])
        #expect(KeyBytes.prefixUpperBound([0x00, 0x01]) == [0x00, 0x02])
    }

    @Test(
        "prefixUpperBound: for 50,000 random (prefix, key) pairs, key starts with prefix exactly when prefix <= key < bound"
    )
    func prefixUpperBoundProperty() {
        var rng = SplitMix64(seed: 41)
        var log = KeyPropertyLog()
        for _ in 0..<50_000 {
            var prefix = rng.interestingBytes(maxLength: 5)
            if rng.chance(1, in: 4) { prefix += Array(repeating: 0xFF, count: 1 + rng.index(3)) }
            var candidate =
                rng.chance(1, in: 2) ? prefix + rng.interestingBytes(maxLength: 3) : rng.relatedBytes(prefix)
            if rng.chance(1, in: 8), let bound = KeyBytes.prefixUpperBound(prefix) {
                candidate = rng.chance(1, in: 2) ? bound : rng.relatedBytes(bound)  // probe right at the bound
            }
            let bound = KeyBytes.prefixUpperBound(prefix)
            let inRange =
                KeyBytes.compare(candidate, prefix) >= 0 && (bound.map { KeyBytes.compare(candidate, $0) < 0 } ?? true)
            log.check(
                inRange == candidate.starts(with: prefix),
                "prefix \(prefix), bound \(String(describing: bound)), key \(candidate): in range \(inRange)")
            if let bound {
                // The bound is itself outside the prefix and no longer than it (it is the smallest
                // string above the range: anything between prefix and bound starts with prefix).
                log.check(
                    !bound.starts(with: prefix) && bound.count <= prefix.count,
                    "bound \(bound) of prefix \(prefix) is not minimal")
            } else {
                log.check(prefix.allSatisfy { $0 == 0xFF }, "nil bound for \(prefix)")
            }
        }
        log.expectNoFailures()
    }
}
