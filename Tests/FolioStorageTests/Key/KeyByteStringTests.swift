import FolioTestSupport
import Foundation
import FolioStorage
import Testing

@Suite("Key encoding: [UInt8] and Data")
struct KeyByteStringTests {
    static let edges: [[UInt8]] = [
        [], [0x00], [0x00, 0x00], [0x00, 0x01], [0x00, 0xFF], [0x01], [0x01, 0x00], [0x7F], [0x80],
        [0xFE], [0xFF], [0xFF, 0x00], [0xFF, 0xFF], [0x61, 0x00, 0x62], [0x61, 0x01], Array(repeating: 0, count: 100),
    ]

    @Test("Edge byte strings and 60,000 random pairs (zero-heavy, shared prefixes) sort lexicographically")
    func order() {
        var log = KeyPropertyLog()
        for a in Self.edges {
            for b in Self.edges {
                log.checkPair(a, b, expected: a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1))
            }
        }
        var rng = SplitMix64(seed: 0xB17E5)
        for _ in 0..<60_000 {
            let a = rng.interestingBytes()
            let b = rng.chance(2, in: 3) ? rng.relatedBytes(a) : rng.interestingBytes()
            let expected = a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
            log.checkPair(a, b, expected: expected)
            if rng.chance(1, in: 4) {
                log.checkPair(Data(a), Data(b), expected: expected)
            }
        }
        log.expectNoFailures()
    }

    @Test("Data and [UInt8] with the same bytes have the same key; keys are the escaped bytes")
    func dataMatchesArray() {
        var rng = SplitMix64(seed: 9)
        var log = KeyPropertyLog()
        for _ in 0..<10_000 {
            let bytes = rng.interestingBytes(maxLength: 40)
            log.check(key(Data(bytes)) == key(bytes), "\(bytes) differs between Data and [UInt8]")
            // A Data slice (non-zero start index) encodes its own bytes only.
            let padded = Data([0xAA] + bytes + [0xBB])
            log.check(key(padded[1..<(padded.count - 1)]) == key(bytes), "a Data slice of \(bytes) encodes extra bytes")
        }
        log.expectNoFailures()
        #expect(key([0x00, 0xFF, 0x01] as [UInt8]) == [0x00, 0xFF, 0xFF, 0x01, 0x00, 0x01])
    }

    @Test("Round trip of [UInt8] and Data, including every byte value")
    func roundTrip() {
        var rng = SplitMix64(seed: 13)
        var log = KeyPropertyLog()
        let all = (0...255).map { UInt8($0) }
        for bytes in Self.edges + [all, all.reversed()] + (0..<10_000).map({ _ in rng.interestingBytes(maxLength: 30) })
        {
            log.checkRoundTrip(bytes) { $0 == bytes }
            log.checkRoundTrip(Data(bytes)) { $0 == Data(bytes) }
        }
        log.expectNoFailures()
    }
}
