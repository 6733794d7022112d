import Testing
@testable import Folio
import FolioStorage

/// A live query removes results by the entries changed records had before the commit. When
/// such a record cannot be read on that side (no view of it, or unreadable), its entries
/// are unknown: the delta must say so, so that queries re-run (or match by identifier)
/// instead of keeping a result whose record changed.
@Suite struct CommitDeltaEntriesTests {
    static let key: [UInt8] = [0x21, 0, 0, 0, 0, 0, 0, 0, 7]

    static func delta(_ kind: ChangeRecord.Kind) -> CommitDelta {
        CommitDelta(
            tree: "records", token: ObservationToken(generation: 2), before: nil, after: nil,
            entries: [ChangeRecord.Entry(key: key, kind: kind)])
    }

    @Test func theOldEntriesOfARecordThatCannotBeReadAreIncomplete() {
        let updated = Self.delta(.updated)
        #expect(!updated.removed(index: "born", unique: false).complete)
        #expect(!updated.added(index: "born", unique: false).complete)
        // By identifier nothing needs reading.
        let identifiers = updated.removed(index: nil, unique: false)
        #expect(identifiers.complete && identifiers.identifiers == [Self.key])
    }

    @Test func aCreatedRecordHasNoOldEntriesAndADeletedOneNoNewOnes() {
        let created = Self.delta(.created).removed(index: "born", unique: false)
        #expect(created.complete && created.count == 0)
        let deleted = Self.delta(.deleted).added(index: "born", unique: false)
        #expect(deleted.complete && deleted.count == 0)
    }
}
