import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage

/// `Persistence.verify` over the key-value store (Docs/Format.md §25): the tree is known,
/// every value is checked, and a damaged one is a problem naming its key.
@Suite struct ValuesVerificationTests {
    static let count = ValueKey<Int>("verify/count", default: 0)
    static let label = ValueKey<String?>("verify/label")

    /// A store on disk with one datastore record and two values, flushed.
    static func makeStore(at path: String) async throws -> Persistence<ReadWrite> {
        let persistence = try Persistence(at: path, options: PersistenceOptions(autoCompaction: nil, log: { _ in }))
        try persistence.values.set(7, for: count)
        try persistence.values.set("seven", for: label)
        try await persistence.values.flush()
        return persistence
    }

    @Test func aStoreWithValuesVerifiesClean() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/kv-verify-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let persistence = try await Self.makeStore(at: path)
        defer { persistence.close() }
        let report = persistence.verify()
        #expect(report.isClean, "folio/values must not be 'a tree of no datastore': \(report.lines)")
        #expect(report.valuesChecked == 2)
        // The inspector agrees: two keys, and their bytes as stored.
        let summary = try StoreInspector(store: persistence.store).keyValueSummary()
        let stored = ("verify/count".utf8.count + 2) + ("verify/label".utf8.count + 1 + #""seven""#.utf8.count)
        #expect(summary.keyCount == 2 && summary.storedBytes == stored && summary.pageBytes > 0)
    }

    @Test func aStoreWithoutValuesChecksNone() throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let report = persistence.verify()
        #expect(report.isClean && report.valuesChecked == 0)
        let summary = try StoreInspector(store: persistence.store).keyValueSummary()
        #expect(summary.keyCount == 0 && summary.storedBytes == 0 && summary.pageBytes == 0)
    }

    /// Values written around the Folio layer: an unknown layout byte, JSON that does not
    /// parse, an empty value. Each is one problem naming its key; the sound ones are not named.
    @Test func damagedValuesAreProblemsNamingTheirKeys() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/kv-verify-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let persistence = try await Self.makeStore(at: path)
        defer { persistence.close() }
        try persistence.store.write { transaction in
            _ = try transaction.put([7] + Array("5".utf8), for: Array("bad/layout".utf8), in: "folio/values")
            _ = try transaction.put([1] + Array(#"{"a": "#.utf8), for: Array("bad/json".utf8), in: "folio/values")
            _ = try transaction.put([], for: Array("bad/empty".utf8), in: "folio/values")
            _ = try transaction.put([1] + Array("[1,2]".utf8), for: Array("fine/array".utf8), in: "folio/values")
        }
        let report = persistence.verify()
        #expect(!report.isClean)
        #expect(report.storage.isClean, "the engine sees nothing wrong: \(report.storage.problems)")
        #expect(report.valuesChecked == 6)
        #expect(report.problems.count == 3, "\(report.lines)")
        #expect(report.problems.allSatisfy { $0.datastore == "folio/values" && $0.index == nil })
        let details = report.problems.map(\.detail)
        #expect(details.contains { $0.hasPrefix(#"key "bad/layout": unknown value layout 7"#) }, "\(details)")
        #expect(details.contains { $0.hasPrefix(#"key "bad/json": the value is not valid JSON"#) }, "\(details)")
        #expect(details.contains { $0.hasPrefix(#"key "bad/empty": the stored value is empty"#) }, "\(details)")
        #expect(!report.lines.contains { $0.contains("fine/array") || $0.contains("verify/") })
        // The app reading the damaged key gets a typed error naming it.
        #expect(throws: FolioError.self) { try persistence.values.value(for: ValueKey<Int>("bad/layout", default: 0)) }
    }
}
