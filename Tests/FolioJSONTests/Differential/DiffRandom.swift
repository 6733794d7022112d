import Foundation
import FolioTestSupport

/// A seeded generator: the same seed gives the same shapes, values and mutations on every
/// platform and run, so a reported seed reproduces its failure. The project's SplitMix64,
/// with the one helper the differential and encoder tests call by this name.
typealias DiffRandom = SplitMix64

extension SplitMix64 {
    /// A number in `0..<bound` (bound > 0).
    mutating func below(_ bound: Int) -> Int { index(bound) }
}

/// Run sizes: the default keeps a debug `swift test` short; `FOLIO_JSON_FUZZ=N` multiplies
/// every generated count by N for long runs (`FOLIO_JSON_FUZZ=50 swift test --filter Differential`).
enum DiffBudget {
    static let factor: Int = {
        guard let text = ProcessInfo.processInfo.environment["FOLIO_JSON_FUZZ"], let n = Int(text), n > 0 else {
            return 1
        }
        return n
    }()

    /// A base seed; `FOLIO_JSON_SEED=S` replays a reported run.
    static let seed: UInt64 = {
        guard let text = ProcessInfo.processInfo.environment["FOLIO_JSON_SEED"], let n = UInt64(text) else {
            return 0x16_F0_11_0
        }
        return n
    }()

    static func count(_ base: Int) -> Int { base * factor }
}
