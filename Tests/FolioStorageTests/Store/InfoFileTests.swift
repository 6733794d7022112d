import Testing
import Foundation
@testable import FolioStorage
import FolioTestSupport

/// The info file is read exactly as Docs/Format.md §2 says: one JSON object by RFC 8259's
/// grammar, no member twice, `formatVersion` a number whose exact value is a whole number.
@Suite struct InfoFileTests {
    static func info(_ version: String, extra: String = "") -> [UInt8] {
        Array("{\"format\":\"folio-store\",\"formatVersion\":\(version)\(extra)}\n".utf8)
    }

    static func decode(_ bytes: [UInt8]) throws(StorageError) -> InfoFile {
        try InfoFile.decode(bytes, path: "/stores/s/info")
    }

    static func isNotAStore(_ bytes: [UInt8]) -> Bool {
        do throws(StorageError) {
            _ = try decode(bytes)
            return false
        } catch {
            if case .notAStore = error { return true }
            return false
        }
    }

    /// Every spelling of a whole number is that number; JSON does not tell them apart.
    @Test(arguments: ["2", "2.0", "2e0", "2E+0", "20e-1", "0.2e1", "2.000", "200e-2", "1", "3"])
    func wholeNumbersAreVersions(_ version: String) throws {
        let expected: UInt32 = version == "1" ? 1 : version == "3" ? 3 : 2
        #expect(try Self.decode(Self.info(version)).formatVersion == expected)
    }

    /// A number that is not whole is refused, however close it is to one (a `Double` reads
    /// `2.00000000000000000001` as 2), and so is one out of range.
    @Test(arguments: [
        "2.00000000000000000001", "1.9", "2e-1", "19999999999999999999e-19", "4294967296", "1e10", "-1",
        "-0", "0", "0.0", "1e99999999999999999999", "true", "null", "\"2\"", "[2]",
    ])
    func otherVersionsAreRefused(_ version: String) {
        #expect(Self.isNotAStore(Self.info(version)), "\(version)")
    }

    @Test func versionsAboveTheSupportedOneAreUnsupported() {
        #expect(
            throws: StorageError.unsupportedFormatVersion(
                path: "/stores/s", found: 4_294_967_295, supported: StorageFormat.version)
        ) {
            _ = try Self.decode(Self.info("4294967295"))
        }
        #expect(
            throws: StorageError.unsupportedFormatVersion(path: "/stores/s", found: 4, supported: StorageFormat.version)
        ) {
            _ = try Self.decode(Self.info("4.0"))
        }
    }

    /// A member named twice (any member, compared after unescaping) makes the file invalid:
    /// no reader has to choose which occurrence wins.
    @Test(arguments: [
        ",\"formatVersion\":2", ",\"format\":\"folio-store\"", ",\"created\":\"x\",\"created\":\"y\"",
        ",\"form\\u0061t\":\"folio-store\"", ",\"x\":1,\"x\":1",
    ])
    func duplicateMembersAreRefused(_ extra: String) {
        #expect(Self.isNotAStore(Self.info("2", extra: extra)), "\(extra)")
    }

    /// Only JSON is accepted: what Foundation's decoder tolerates is not.
    @Test func onlyJSONIsAccepted() {
        let refused = [
            Array("{\"format\":\"folio-store\",\"formatVersion\":2,}".utf8),
            [0xEF, 0xBB, 0xBF] + Self.info("2"),
            Array("{\"format\":\"folio-store\",\"formatVersion\":02}".utf8),
            Array("{\"format\":\"folio-store\",\"formatVersion\":2}x".utf8),
            Array("[{\"format\":\"folio-store\",\"formatVersion\":2}]".utf8),
            Array("{\"format\":\"folio-store\",\"formatVersion\":2,\"x\":\"\\ud800\"}".utf8),
            Array("{\"format\":\"folio-store\",\"formatVersion\":2,\"x\":[1,]}".utf8),
            Array("{\"format\":\"folio-store\",\"formatVersion\":2,\"x\":\"".utf8) + [0xFF] + Array("\"}".utf8),
            Array("{\"format\":\"folio-stor\",\"formatVersion\":2}".utf8),
            Array("{\"formatVersion\":2}".utf8),
            [],
        ]
        for bytes in refused {
            #expect(Self.isNotAStore(bytes), "\(String(decoding: bytes, as: UTF8.self))")
        }
    }

    /// Unknown members of any kind are ignored, `created` may hold anything or be absent,
    /// escapes are read, and whitespace and member order do not matter.
    @Test func unknownMembersAndLayoutDoNotMatter() throws {
        let accepted = [
            " \t\r\n{ \"created\" : 5 , \"formatVersion\" : 2 , \"format\" : \"folio\\u002dstore\" } \n",
            "{\"format\":\"folio-store\",\"formatVersion\":2,\"x\":{\"a\":[1,{\"b\":null}],\"a2\":true},\"y\":[[[]]],\"é\":\"\\ud83d\\ude00\"}",
            "{\"format\":\"folio-store\",\"formatVersion\":2,\"x\":{\"a\":1,\"a\":2}}",
            "{\"format\":\"folio-store\",\"formatVersion\":2,\"nested\":" + String(repeating: "[", count: 10_000)
                + String(repeating: "]", count: 10_000) + "}",
        ]
        for text in accepted {
            #expect(try Self.decode(Array(text.utf8)).formatVersion == 2, "\(text.prefix(80))")
        }
        #expect(
            try Self.decode(Self.info("2", extra: ",\"created\":\"2026-11-21T20:49:23Z\"")).created
                == "2026-11-21T20:49:23Z")
    }

    /// What the engine writes reads back, and every committed fixture's info file opens. The
    /// info file records the version a store was created with: 2 for Fixtures/v3 too, which
    /// became version 3 at its first commit that recorded a tree wholesale.
    @Test func writtenAndFixtureInfoFilesOpen() throws {
        let written = InfoFile.now()
        #expect(try Self.decode(written.encoded()) == written)
        let fixtures = ProjectExecutable.packageRoot() + "/Fixtures"
        var checked = 0
        for version in try FileManager.default.contentsOfDirectory(atPath: fixtures) {
            for store in try FileManager.default.contentsOfDirectory(atPath: "\(fixtures)/\(version)") {
                let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(fixtures)/\(version)/\(store)/info")))
                #expect(try Self.decode(bytes).formatVersion == (version == "v1" ? 1 : 2), "\(version)/\(store)")
                checked += 1
            }
        }
        #expect(checked >= 5)
    }
}
