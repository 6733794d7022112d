import Testing
@_spi(Testing) @testable import FolioStorage
import FolioTestSupport

/// A run checksum continued from each sealed page's own checksum (what a commit does) equals
/// the checksum of the run's bytes read one by one (what recovery and the verifier compute):
/// if the shift arithmetic were wrong, every run written would fail to validate.
@Suite struct RunChecksumShiftTests {
    /// Pages of random lengths and contents, sealed at their file offsets, folded both ways.
    @Test func foldingPagesByTheirChecksumsEqualsReadingTheirBytes() {
        var random = SplitMix64(seed: 27)
        for trial in 0..<200 {
            var writer = ByteWriter()
            var offset = UInt64(64 + random.next() % 100_000)
            let seed = RunChecksum.seeded(with: UInt32(truncatingIfNeeded: random.next()))
            var folded = seed
            let runStart = offset
            let pages = 1 + Int(random.next() % 6)
            for _ in 0..<pages {
                let start = PageHeader.begin(&writer, kind: .overflow, count: 0, generation: UInt64(trial))
                // Lengths from a few bytes past the header to past 2^16, so that every nibble
                // position of the shift's tables is used.
                let bodyLength = trial % 50 == 0 ? 70_000 + Int(random.next() % 5_000) : Int(random.next() % 9_000)
                for _ in 0..<bodyLength { writer.append(UInt8(truncatingIfNeeded: random.next())) }
                PageHeader.seal(&writer, start: start, fileOffset: offset)
                let length = writer.count - start
                let stored = writer.bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: start, as: UInt32.self) }
                folded = RunChecksum.update(
                    folded, sealedPageChecksum: UInt32(littleEndian: stored), length: length, fileOffset: offset)
                offset += UInt64(length)
            }
            let read = writer.bytes.withUnsafeBytes { RunChecksum.update(seed, $0) }
            #expect(folded == read, "trial \(trial): \(pages) pages from offset \(runStart)")
        }
    }

    /// The shift by n zero bytes equals updating over n zeros, for lengths around every
    /// power of 16 (where the tables' nibble positions change).
    @Test func shiftingEqualsUpdatingOverZeros() {
        var random = SplitMix64(seed: 3)
        var lengths = [0, 1, 2, 15, 16, 17, 255, 256, 257, 4_095, 4_096, 4_097, 65_535, 65_536, 65_537, 1_048_576]
        for _ in 0..<20 { lengths.append(Int(random.next() % 300_000)) }
        for length in lengths {
            let zeros = [UInt8](repeating: 0, count: length)
            let register = UInt32(truncatingIfNeeded: random.next())
            let read = zeros.withUnsafeBytes { CRC32C.update(register, $0) }
            #expect(CRC32C.shift(register, byZeroBytes: length) == read, "length \(length)")
        }
    }
}
