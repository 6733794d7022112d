import Testing
import Foundation
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport

/// `Persistence.makeDurable()` makes durable everything written before it, in grouped
/// durability: the transactions of the window and the values of the key-value store set
/// outside transactions. A power cut that keeps only synced bytes, right after it returns,
/// loses neither.
@Suite struct MakeDurableTests {
    struct Note: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var text: String
    }

    struct NoteFormat: DatastoreFormat {
        static let key = "notes"
        typealias Instance = Note
    }

    @Test func transactionsAndValuesSurviveAPowerCutAfterMakeDurable() async throws {
        let power = PowerLossFileSystem()
        try power.createDirectory("/store")
        try power.syncDirectory("/")
        // A window no test waits out: only makeDurable syncs.
        let persistence = try KeyValueFaultTests.open(power, durability: .grouped(window: .seconds(600)))
        defer { persistence.close() }
        let notes = persistence.datastore(for: NoteFormat.self)
        let seen = ValueKey<Int>("durable/seen", default: 0)

        try await notes.persist(Note(id: 1, text: "in a transaction"))
        try persistence.values.set(7, for: seen)  // outside any transaction: queued
        try await persistence.makeDurable()

        let recovered = try KeyValueFaultTests.open(power.crashImage(mode: .durableOnly))
        defer { recovered.close() }
        #expect(try await recovered.datastore(for: NoteFormat.self).load(1)?.text == "in a transaction")
        #expect(try recovered.values.value(for: seen) == 7)
        #expect(recovered.verify().isClean)
    }
}
