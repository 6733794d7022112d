import Testing
import Foundation
@_spi(Engine) @testable import Folio
import FolioStorage

/// The value cache changes speed, never answers: the model run of ``KeyValueModelTests``
/// passes with a cache of 8 entries (evicting all the time, so reads alternate between the
/// cache and the store) and with no cache at all (every read of a key not set since goes to
/// the store). `FOLIO_STRESS_TESTS=1` runs more seeds and steps.
@Suite struct KeyValueCacheExactnessTests {
    enum Cache: String, CaseIterable, CustomTestStringConvertible {
        case tiny, none, tinyBytes
        var limits: RecordCacheLimits? {
            switch self {
            case .tiny: return RecordCacheLimits(count: 8, bytes: 1 << 20)
            case .none: return nil
            case .tinyBytes: return RecordCacheLimits(count: 100_000, bytes: 64)  // a few values' worth
            }
        }
        var testDescription: String { rawValue }
    }

    static var seeds: [UInt64] { KV.isLong ? Array(100...115) : [100, 101] }

    @Test(arguments: Cache.allCases, seeds)
    func modelHoldsWithAnEvictingOrNoCache(cache: Cache, seed: UInt64) async throws {
        let path = KV.temporaryPath("cache-\(cache.rawValue)")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await KeyValueModelRun.run(
            seed: seed, steps: KeyValueModelTests.steps, path: path,
            options: KV.options(durability: .grouped(window: .milliseconds(2)), valueCache: cache.limits))
    }

    /// Many more keys than the cache holds, read over and over between sets: every read is
    /// the newest value whichever way it is answered.
    @Test(arguments: Cache.allCases)
    func manyKeysThroughATinyCacheReadTheirNewestValues(cache: Cache) async throws {
        let persistence = Persistence.inMemory(options: KV.options(valueCache: cache.limits))
        defer { persistence.close() }
        let values = persistence.values
        let keys = (0..<64).map { ValueKey<Int>("c/\($0)", default: -1) }
        var expected = [Int](repeating: -1, count: keys.count)
        for round in 0..<(KV.isLong ? 40 : 8) {
            for (i, key) in keys.enumerated() where (i + round) % 3 == 0 {
                try values.set(round * 100 + i, for: key)
                expected[i] = round * 100 + i
            }
            if round % 2 == 0 { try await values.flush() }
            for (i, key) in keys.enumerated() {
                #expect(try values.value(for: key) == expected[i], "round \(round) key \(key.name)")
            }
            // A read-only persistence over the same engine reads the same values.
            if round % 3 == 2 {
                try await values.flush()
                let reopened = persistence.readOnly()
                for (i, key) in keys.enumerated() {
                    #expect(reopened.values[key] == expected[i], "round \(round) read-only \(key.name)")
                }
            }
        }
    }
}
