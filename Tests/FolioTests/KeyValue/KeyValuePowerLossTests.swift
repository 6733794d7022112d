import Testing
import Foundation
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport

/// Power cuts (not process kills: a killed process's written pages survive in the OS, a
/// power cut loses everything not synced). Over a `PowerLossFileSystem`: after `flush()`
/// returns, a crash image keeping only what was synced still has every value set before it;
/// values set after the last flush may be lost, never half a transaction, and the store
/// opens and verifies clean, in both durabilities.
@Suite struct KeyValuePowerLossTests {
    static func open(_ fileSystem: any FileSystem, durability: FolioStorage.Durability) throws -> Persistence<ReadWrite>
    {
        try KeyValueFaultTests.open(fileSystem, durability: durability)
    }

    @Test(arguments: [FolioStorage.Durability.full, .grouped(window: .seconds(30))])
    func flushedValuesSurviveAPowerCut(durability: FolioStorage.Durability) async throws {
        let power = PowerLossFileSystem()
        try power.createDirectory("/store")
        try power.syncDirectory("/")
        let counter = ValueKey<Int>("p/counter", default: 0)
        let pair = (ValueKey<Int>("p/a", default: 0), ValueKey<Int>("p/b", default: 0))
        let persistence = try Self.open(power, durability: durability)
        var rng = SplitMix64(seed: 0x9C0E)
        for round in 1...12 {
            try await persistence.perform {
                try persistence.values.set(round, for: pair.0)
                try persistence.values.set(round, for: pair.1)
            }
            // Sets after the transaction: only the flush makes them durable.
            for n in 1...20 { try persistence.values.set(round * 100 + n, for: counter) }
            try await persistence.values.flush()
            let flushed = round * 100 + 20
            // Some more sets, unflushed: a cut may lose them, but not what was flushed.
            for n in 21...(21 + rng.index(5)) { try persistence.values.set(round * 100 + n, for: counter) }
            for mode in [CrashMode.durableOnly, .random] {
                let image = power.crashImage(using: &rng, mode: mode)
                let recovered = try Self.open(image, durability: durability)
                let value = try recovered.values.value(for: counter)
                #expect(
                    value >= flushed && value <= round * 100 + 25,
                    "round \(round), \(mode): counter \(value), flushed \(flushed)")
                let (a, b) = (try recovered.values.value(for: pair.0), try recovered.values.value(for: pair.1))
                #expect(a == round && b == round, "round \(round), \(mode): pair \(a), \(b)")
                #expect(recovered.verify().isClean, "round \(round), \(mode)")
                recovered.close()
            }
        }
        persistence.close()
    }
}
