/// A small, fast, seeded random number generator (Steele, Lea and Flood's SplitMix64).
///
/// Use it wherever a test needs randomness that must be reproducible: the same seed always
/// yields the same sequence on every platform and Swift version, so a failing seed printed by
/// a test can be replayed exactly. Not suitable for anything security-related.
public struct SplitMix64: RandomNumberGenerator, Sendable, Equatable {
    /// The generator's internal state; advancing it is all `next()` does.
    public private(set) var state: UInt64

    /// Creates a generator whose sequence is fully determined by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly chosen index in `0..<count` (modulo bias is negligible for test sizes).
    public mutating func index(_ count: Int) -> Int {
        Int(next() % UInt64(count))
    }

    /// True with probability `numerator / denominator`.
    public mutating func chance(_ numerator: Int, in denominator: Int) -> Bool {
        index(denominator) < numerator
    }

    /// A uniformly chosen element of a non-empty array.
    public mutating func pick<T>(_ choices: [T]) -> T {
        choices[index(choices.count)]
    }
}
