import Foundation

/// A seeded generator (SplitMix64): the same seed gives the same shapes, values and
/// mutations on every platform and run, so a reported seed reproduces its failure.
struct DiffRandom: RandomNumberGenerator {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound` (bound > 0).
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// True with probability `numerator / denominator`.
    mutating func chance(_ numerator: Int, in denominator: Int) -> Bool { below(denominator) < numerator }

    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}

/// Run sizes: the default keeps a debug `swift test` short; `FOLIO_JSON_FUZZ=N` multiplies
/// every generated count by N for long runs (`FOLIO_JSON_FUZZ=50 swift test --filter Differential`).
enum DiffBudget {
    static let factor: Int = {
        guard let text = ProcessInfo.processInfo.environment["FOLIO_JSON_FUZZ"], let n = Int(text), n > 0 else { return 1 }
        return n
    }()

    /// A base seed; `FOLIO_JSON_SEED=S` replays a reported run.
    static let seed: UInt64 = {
        guard let text = ProcessInfo.processInfo.environment["FOLIO_JSON_SEED"], let n = UInt64(text) else { return 0x16_F0_11_0 }
        return n
    }()

    static func count(_ base: Int) -> Int { base * factor }
}
