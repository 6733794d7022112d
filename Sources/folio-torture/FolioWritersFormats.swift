import Folio
import FolioTestSupport

// The datastores of the Folio-level multi-writer workload (FolioWritersWorkload in test
// support). Tests/FolioTests/MultiWriter declares the same ones: a declaration is its key,
// its instance type, its versions and its indexes, not the name of the format type.

/// Writer `writer`'s own datastore: its transactions' entries, indexed by serial position.
protocol WriterEntriesFormat: DatastoreFormat where Instance == WriterEntry, Identifier == Int {
    /// The writer whose datastore this is.
    static var writer: Int { get }
    var seq: Index<WriterEntry, Int> { get }
}

struct WriterEntries0: WriterEntriesFormat {
    static let key = "writer-0"
    static let writer = 0
    let seq = Index(\WriterEntry.seq)
}

struct WriterEntries1: WriterEntriesFormat {
    static let key = "writer-1"
    static let writer = 1
    let seq = Index(\WriterEntry.seq)
}

struct WriterEntries2: WriterEntriesFormat {
    static let key = "writer-2"
    static let writer = 2
    let seq = Index(\WriterEntry.seq)
}

struct WriterEntries3: WriterEntriesFormat {
    static let key = "writer-3"
    static let writer = 3
    let seq = Index(\WriterEntry.seq)
}

/// The own datastores of writers 0 ..< 4, by writer.
let writerEntriesFormats: [any WriterEntriesFormat.Type] = [
    WriterEntries0.self, WriterEntries1.self, WriterEntries2.self, WriterEntries3.self,
]

/// The datastore every writer shares: the ledger and the writers' slots, indexed by writer
/// and by transaction number.
struct SharedFormat: DatastoreFormat {
    static let key = "shared"
    typealias Instance = SharedRecord
    let writer = Index(\SharedRecord.writer)
    let n = Index(\SharedRecord.n)
}
