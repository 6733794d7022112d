import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage
import FolioTestSupport
import LibraryExample

/// A store written through the Folio API with a small datastore and a key-value store
/// (Docs/Format.md §25), under Fixtures/v2/values: later builds must keep reading every
/// value as it was written, and `verify` must pass it. `FOLIO_WRITE_FIXTURES=1 swift test
/// --filter ValuesFixtureTests` writes it again.
@Suite(.serialized) struct ValuesFixtureTests {
    static let fixture = ProjectExecutable.packageRoot() + "/Fixtures/v2/values"

    /// A Codable value with nesting, as an app stores its settings.
    struct Preferences: Codable, Sendable, Equatable {
        var theme: String
        var fontScale: Double
        var pinned: [Int]
    }

    /// The fixture's keys, one per kind of value.
    enum Keys {
        static let launchCount = ValueKey<Int>("launchCount", default: 0)
        static let userName = ValueKey<String>("user/name", default: "")
        static let nickname = ValueKey<String?>("user/nickname")
        static let preferences = ValueKey<Preferences>(
            "preferences", default: Preferences(theme: "light", fontScale: 1, pinned: []))
        static let accented = ValueKey<String>("größe/café ☕", default: "")
    }

    static let preferences = Preferences(theme: "dark", fontScale: 1.25, pinned: [3, 1, 2])
    static let authors = SampleData.authors(3)

    @Test func writesFixtureWhenAsked() async throws {
        guard ProcessInfo.processInfo.environment["FOLIO_WRITE_FIXTURES"] == "1" else { return }
        try? FileManager.default.removeItem(atPath: Self.fixture)
        let persistence = try Persistence(
            at: Self.fixture, options: PersistenceOptions(autoCompaction: nil, log: { _ in }))
        let authors = persistence.datastore(for: LibraryExample.AuthorFormat.self)
        try await persistence.perform {
            for author in Self.authors { try await authors.persist(author) }
        }
        let values = persistence.values
        try values.set(42, for: Keys.launchCount)
        try values.set("Ada Okafor", for: Keys.userName)
        try values.set(nil, for: Keys.nickname)
        try values.set(Self.preferences, for: Keys.preferences)
        try values.set("süß", for: Keys.accented)
        try await values.flush()
        persistence.close()
        try? FileManager.default.removeItem(atPath: Self.fixture + "/lock")
    }

    /// Every value reads back as written, in a copy (opening may write); the raw entries are
    /// as Format.md §25 describes them; the store verifies clean with every value checked.
    @Test func valuesReadExactly() async throws {
        let copy = FileManager.default.temporaryDirectory.path + "/values-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: copy)
        let persistence = try Persistence(at: copy, options: PersistenceOptions(log: { _ in }))
        defer { persistence.close() }
        let values = persistence.values

        #expect(try values.value(for: Keys.launchCount) == 42)
        #expect(try values.value(for: Keys.userName) == "Ada Okafor")
        #expect(try values.contains(Keys.nickname), "nil is stored, as null")
        #expect(try values.value(for: Keys.nickname) == nil)
        #expect(try values.value(for: Keys.preferences) == Self.preferences)
        #expect(try values.value(for: Keys.accented) == "süß")
        #expect(try values.keys() == ["größe/café ☕", "launchCount", "preferences", "user/name", "user/nickname"])
        // In the order of the names' UTF-8 bytes ("g" before "l").
        #expect(try values.keys(withPrefix: "user/") == ["user/name", "user/nickname"])
        #expect(try await persistence.datastore(for: LibraryExample.AuthorFormat.self).count() == Self.authors.count)

        // The bytes, as the format specifies: the name's UTF-8 bytes; layout 1, then JSON.
        let view = try persistence.store.read()
        #expect(try view.get(Array("launchCount".utf8), in: "folio/values") == [0x01] + Array("42".utf8))
        #expect(try view.get(Array("user/nickname".utf8), in: "folio/values") == [0x01] + Array("null".utf8))
        #expect(try view.get(Array("größe/café ☕".utf8), in: "folio/values") == [0x01] + Array(#""süß""#.utf8))
        #expect(try view.count(in: "folio/values") == 5)
        #expect(try view.descriptor(of: "folio/catalog") != nil)

        let report = persistence.verify()
        #expect(report.isClean, "\(report.lines)")
        #expect(report.valuesChecked == 5)
        #expect(report.recordsChecked == Self.authors.count)
    }
}
