import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage

/// The key-value store (Docs/Format.md §25) through the tool: `info` counts it, `dump
/// --values` prints it, `verify` checks it.
@Suite struct ValuesTests {
    struct Window: Codable, Sendable, Equatable {
        var width: Int
        var title: String
    }

    static let launchCount = ValueKey<Int>("launchCount", default: 0)
    static let userName = ValueKey<String>("user/name", default: "")
    static let nickname = ValueKey<String?>("user/nickname")
    static let window = ValueKey<Window>("window", default: Window(width: 0, title: ""))
    static let accented = ValueKey<String>("café", default: "")

    /// A store with one blob and five values; the JSON each value is stored as, by key.
    static func makeStore(at path: String) async throws -> [(key: String, json: String)] {
        let persistence = try Persistence(at: path, options: quietOptions)
        defer { persistence.close() }
        try await persistence.datastore(for: BlobFormat.self).persist(Blob(id: 1, text: "one"))
        try persistence.values.set(5, for: launchCount)
        try persistence.values.set("Ada \"A\" Okafor", for: userName)
        try persistence.values.set(nil, for: nickname)
        try persistence.values.set(Window(width: 640, title: "Main"), for: window)
        try persistence.values.set("crème", for: accented)
        try await persistence.values.flush()
        return [
            ("café", #""crème""#), ("launchCount", "5"), ("user/name", #""Ada \"A\" Okafor""#),
            ("user/nickname", "null"), ("window", #"{"title":"Main","width":640}"#),
        ]
    }

    /// Writes `bytes` as the stored value of `key`, around the Folio layer.
    static func damage(_ path: String, key: String, bytes: [UInt8]) throws {
        let persistence = try Persistence(at: path, options: quietOptions)
        defer { persistence.close() }
        try persistence.store.write { _ = try $0.put(bytes, for: Array(key.utf8), in: "folio/values") }
    }

    @Test func infoCountsKeysAndBytes() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let expected = try await Self.makeStore(at: path)
        let run = try folio("info", path)
        #expect(run.status == 0 && run.errors.isEmpty, "\(run)")
        let start = try #require(run.lines.firstIndex(of: "key-value store"), "\(run)")
        let section = Array(run.lines[(start + 1)...].prefix { !$0.isEmpty })
        #expect(section.first == "  keys   5", "\(section)")
        // Each entry: its name's bytes, the layout byte and the JSON.
        let stored = expected.reduce(0) { $0 + $1.key.utf8.count + 1 + $1.json.utf8.count }
        #expect(
            section.last?.hasPrefix("  bytes  \(stored) bytes of keys and values as stored, in ") == true, "\(section)")
        #expect(section.last?.hasSuffix(" of pages") == true, "\(section)")
        // The datastore section is still there, and only one key-value section.
        #expect(run.lines.contains("datastore blobs"))
        #expect(run.lines.filter { $0.hasPrefix("key-value store") }.count == 1)
    }

    @Test func infoSaysWhenThereAreNoValues() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        try await makeBlobStore(at: path, count: 2)
        let run = try folio("info", path)
        #expect(run.status == 0, "\(run)")
        #expect(run.lines.last == "key-value store: no values", "\(run)")
    }

    @Test func dumpValuesPrintsEveryKeyAndItsJSON() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let expected = try await Self.makeStore(at: path)

        // --json: one {"key","value"} document a line, members sorted, in key byte order.
        let run = try folio("dump", path, "--values", "--json")
        #expect(run.status == 0 && run.errors.isEmpty, "\(run)")
        #expect(
            run.lines == expected.map { #"{"key":"# + Self.quoted($0.key) + #","value":"# + $0.json + "}" }, "\(run)")

        // Pretty: the same documents, parsed back.
        let pretty = try folio("dump", path, "--values")
        #expect(pretty.status == 0, "\(pretty)")
        let documents = try Self.documents(pretty: pretty)
        #expect(documents.map { $0["key"] as? String } == expected.map(\.key))
        #expect(documents.first { $0["key"] as? String == "launchCount" }?["value"] as? Int == 5)
        #expect(documents.first { $0["key"] as? String == "user/nickname" }?["value"] is NSNull)
        let window = try #require(documents.first { $0["key"] as? String == "window" }?["value"] as? [String: Any])
        #expect(window["width"] as? Int == 640 && window["title"] as? String == "Main")

        // Limits as for records: bounds are key names, inclusive.
        let ranged = try folio("dump", path, "--values", "--json", "--from", "user/", "--to", "user/~")
        #expect(ranged.lines.map(Self.key) == ["user/name", "user/nickname"], "\(ranged)")
        let limited = try folio("dump", "--values", path, "--json", "--reverse", "--limit", "2")
        #expect(limited.lines.map(Self.key) == ["window", "user/nickname"], "\(limited)")
        let none = try folio("dump", path, "--values", "--limit", "0")
        #expect(none.status == 0 && none.output.isEmpty, "\(none)")
    }

    @Test func dumpValuesOnAStoreWithoutValuesPrintsNothing() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        try await makeBlobStore(at: path, count: 1)
        let run = try folio("dump", path, "--values")
        #expect(run.status == 0 && run.output.isEmpty && run.errors.isEmpty, "\(run)")
    }

    @Test func dumpValuesRefusesADatastoreOrAnIndex() async throws {
        expectOneLineError(
            try folio("dump", "store", "blobs", "--values"), status: 2,
            containing: "dump: --values dumps the key-value store: give no DATASTORE with it")
        expectOneLineError(
            try folio("dump", "store", "--values", "--index", "year"), status: 2,
            containing: "dump: --index is for a datastore's records, not for --values")
        expectOneLineError(try folio("dump", "store"), status: 2, containing: "dump: missing DATASTORE (or --values")
    }

    @Test func dumpValuesRefusesAnUnknownLayoutNamingTheKey() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        _ = try await Self.makeStore(at: path)
        try Self.damage(path, key: "aa/first", bytes: [2] + Array("5".utf8))
        expectOneLineError(
            try folio("dump", path, "--values"), status: 3,
            containing: #"the value of key "aa/first" has layout 2, not 1"#)
    }

    @Test func verifyChecksValuesAndNamesADamagedKey() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        _ = try await Self.makeStore(at: path)

        let clean = try folio("verify", path)
        #expect(clean.status == 0, "\(clean)")
        #expect(!clean.output.contains("belongs to no datastore"), "\(clean)")
        #expect(clean.lines.dropLast().last?.contains("1 record, 0 index entries and 5 values in ") == true, "\(clean)")

        try Self.damage(path, key: "user/name", bytes: [1] + Array(#""unterminated"#.utf8))
        let damaged = try folio("verify", path)
        #expect(damaged.status == 1, "\(damaged)")
        let problems = damaged.lines.filter { $0.hasPrefix("problem: ") }
        #expect(problems.count == 1, "\(damaged)")
        #expect(
            problems.first?.hasPrefix(#"problem: datastore folio/values: key "user/name": the value is not valid JSON"#)
                == true,
            "\(problems)")
        #expect(damaged.lines.last == "1 problem found")
    }

    // MARK: Reading the output

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    static func key(_ line: String) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["key"] as? String
    }

    /// Pretty documents, each ending with "}" alone on a line.
    static func documents(pretty run: FolioRun) throws -> [[String: Any]] {
        var result: [[String: Any]] = []
        var current: [String] = []
        for line in run.lines {
            current.append(line)
            if line == "}" {
                let object = try JSONSerialization.jsonObject(with: Data(current.joined(separator: "\n").utf8))
                let document = try #require(object as? [String: Any])
                #expect(Set(document.keys) == ["key", "value"])
                result.append(document)
                current = []
            }
        }
        #expect(current.isEmpty, "trailing text after the last document")
        return result
    }
}
