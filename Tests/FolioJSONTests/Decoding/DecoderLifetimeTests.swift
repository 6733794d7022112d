import Testing
import Foundation
import FolioJSON

/// A decoder reads its input in place, so one kept past `decode` must not read freed
/// memory: using it stops the process with a clear message instead (an exit test).
@Suite struct DecoderLifetimeTests {
    /// Keeps the decoder it was given, which a well-behaved type never does.
    final class KeepsItsDecoder: Decodable, @unchecked Sendable {
        let decoder: any Decoder
        let value: Int
        init(from decoder: any Decoder) throws {
            self.decoder = decoder
            value = try decoder.singleValueContainer().decode(Int.self)
        }
    }

    @Test func aDecoderUsedAfterDecodeReturnsStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            let kept = try FolioJSONDecoder().decode(KeepsItsDecoder.self, from: Array("42".utf8))
            _ = try kept.decoder.singleValueContainer().decode(Int.self)
        }
    }

    @Test func aDecoderUsedDuringDecodeWorks() throws {
        #expect(try FolioJSONDecoder().decode(KeepsItsDecoder.self, from: Array("42".utf8)).value == 42)
    }
}
