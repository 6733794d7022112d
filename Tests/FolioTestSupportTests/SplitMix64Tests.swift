import FolioTestSupport
import Testing

@Suite struct SplitMix64Tests {
    @Test func matchesTheReferenceSequence() {
        // Reference outputs of SplitMix64 (Vigna's splitmix64.c) for seed 0.
        var rng = SplitMix64(seed: 0)
        #expect(rng.next() == 0xE220_A839_7B1D_CDAF)
        #expect(rng.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(rng.next() == 0x06C4_5D18_8009_454F)
    }

    @Test func sameSeedSameSequenceDifferentSeedDifferentSequence() {
        var a = SplitMix64(seed: 42), b = SplitMix64(seed: 42), c = SplitMix64(seed: 43)
        let first = (0..<8).map { _ in a.next() }
        #expect(first == (0..<8).map { _ in b.next() })
        #expect(first != (0..<8).map { _ in c.next() })
    }

    @Test func drivesStandardLibraryRandomness() {
        var a = SplitMix64(seed: 7), b = SplitMix64(seed: 7)
        #expect(Array(0..<100).shuffled(using: &a) == Array(0..<100).shuffled(using: &b))
        #expect(Int.random(in: 0..<1000, using: &a) == Int.random(in: 0..<1000, using: &b))
    }
}
