import Testing
import Foundation
import FolioStorage
import FolioTestSupport

/// A store written by format version 1, committed under Fixtures/v1/engine-basic. Every
/// later version of Folio must keep reading it exactly (and writing to a copy of it).
/// `FOLIO_WRITE_FIXTURES=1 swift test --filter FixtureTests` writes it again; never do
/// that for a released format version.
@Suite(.serialized) struct FixtureTests {
    static let fixture = ProjectExecutable.packageRoot() + "/Fixtures/v1/engine-basic"

    static func blob(_ i: Int, _ length: Int) -> [UInt8] { (0..<length).map { UInt8(($0 * 7 + i) % 256) } }

    /// What the fixture holds, built the way the fixture was written.
    static func expectedModel() -> TreeModel {
        var model = TreeModel()
        for i in 0..<2_000 where i % 7 != 0 { model.put(Array("n\(i)".utf8), for: KeyEncoding.encode(Int64(i)), in: "numbers") }
        model.put(Array("after".utf8), for: KeyEncoding.encode(Int64(1_000_000)), in: "numbers")
        for i in 0..<3 { model.put(blob(i, i == 1 ? 100 : 5_000), for: Array("b\(i)".utf8), in: "blobs") }
        return model
    }

    static func writeFixture(at path: String) throws {
        let store = try Store.open(at: path, options: testOptions())
        try store.write { txn in
            for i in 0..<2_000 { try txn.put(Array("n\(i)".utf8), for: KeyEncoding.encode(Int64(i)), in: "numbers") }
            for i in 0..<3 { try txn.put(blob(i, 5_000), for: Array("b\(i)".utf8), in: "blobs") }
            for i in 0..<10 { try txn.put([UInt8(i)], for: [UInt8(i)], in: "temporary") }
        }
        try store.write { txn in
            for i in stride(from: 0, to: 2_000, by: 7) { try txn.remove(KeyEncoding.encode(Int64(i)), from: "numbers") }
            try txn.dropTree("temporary")
            try txn.put(blob(1, 100), for: Array("b1".utf8), in: "blobs")
        }
        try store.compact()
        try store.write { try $0.put(Array("after".utf8), for: KeyEncoding.encode(Int64(1_000_000)), in: "numbers") }
        store.close()
    }

    @Test func writesFixtureWhenAsked() throws {
        guard ProcessInfo.processInfo.environment["FOLIO_WRITE_FIXTURES"] == "1" else { return }
        try? FileManager.default.removeItem(atPath: Self.fixture)
        try Self.writeFixture(at: Self.fixture)
        try? FileManager.default.removeItem(atPath: Self.fixture + "/lock")
    }

    @Test func versionOneFixtureReadsExactly() throws {
        // Read-only, in place: reading writes nothing, so the fixture stays untouched.
        let store = try Store.openReadOnly(at: Self.fixture, options: testOptions())
        #expect(store.generation == 5)
        let view = try store.read()
        #expect(try view.trees().map(\.name) == ["blobs", "numbers"])
        #expect(try contents(of: view) == Self.expectedModel())
        #expect(try view.changes() == ChangeRecord(trees: [.init(tree: "numbers", entries: [
            .init(key: KeyEncoding.encode(Int64(1_000_000)), kind: .created)])]))
        let report = store.verify()
        #expect(report.isClean, "\(report.problems)")
        #expect(report.commitsChecked == 2)  // the compaction and the commit after it
    }

    @Test func versionOneFixtureAcceptsWrites() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let copy = directory.child("store")
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: copy)
        let store = try Store.open(at: copy, options: testOptions())
        try store.write { try $0.put([1], for: [1], in: "new") }
        try store.compact()
        var model = Self.expectedModel()
        model.put([1], for: [1], in: "new")
        #expect(try contents(of: store.read()) == model)
        #expect(store.verify().isClean)
        store.close()
    }
}
