/// A small deterministic pseudo-random generator (SplitMix64), so every run and every system
/// sees the same keys, values and records.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A deterministic permutation of `0..<count`, for visiting keys in a random but repeatable
/// order.
func shuffledIndices(_ count: Int, seed: UInt64) -> [Int] {
    var rng = SplitMix64(seed: seed)
    var indices = Array(0..<count)
    indices.shuffle(using: &rng)
    return indices
}
