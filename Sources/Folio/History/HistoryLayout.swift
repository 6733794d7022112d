import FolioStorage

/// Where a persistence keeps what its history needs beyond the commits themselves
/// (Docs/Format.md §26): the tree `folio/history`, whose keys a commit writes to say what it
/// was. A commit's change record lists the keys it wrote, and their values as of its
/// generation say the rest:
///
///     name   the action's name (UTF-8): `perform(named:)`, and undo and redo commits
///     undo   u64 little-endian: the generation of the action this commit reverted
///     redo   u64 little-endian: the generation of the undo commit this commit reverted
enum HistoryLayout {
    static let tree = "folio/history"
    static let name = Array("name".utf8)
    static let undo = Array("undo".utf8)
    static let redo = Array("redo".utf8)

    static func encode(_ generation: UInt64) -> [UInt8] {
        withUnsafeBytes(of: generation.littleEndian) { Array($0) }
    }

    static func decode(_ bytes: [UInt8]?) -> UInt64? {
        guard let bytes, bytes.count == 8 else { return nil }
        return bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }
}

extension HistoryLayout {
    /// Adds a problem for every entry of `folio/history` in `view` that §26 does not allow:
    /// a key other than `name`, `undo` and `redo`, or a generation that is not 8 bytes.
    static func check(in view: ReadView, into report: inout PersistenceVerificationReport) throws(StorageError) {
        var entries = try view.cursor(in: tree)
        while let entry = try entries.next() {
            let key = String(decoding: entry.key, as: UTF8.self)
            let problem: String?
            switch entry.key {
            case name: problem = nil
            case undo, redo: problem = entry.value.count == 8 ? nil : "its value is not a generation (8 bytes)"
            default: problem = "it is not a key of the history tree"
            }
            if let problem {
                report.problems.append(DatastoreProblem(datastore: tree, detail: "key \"\(key)\": \(problem)"))
            }
        }
    }

    /// Adds a problem for every entry of `folio/retention` in `view` that §17.1 does not
    /// allow.
    static func checkRetention(
        in view: ReadView, into report: inout PersistenceVerificationReport
    )
        throws(StorageError)
    {
        var entries = try view.cursor(in: RetentionLayout.tree)
        while let entry = try entries.next() {
            if let problem = RetentionLayout.problem(key: entry.key, value: entry.value) {
                let key = String(decoding: entry.key, as: UTF8.self)
                report.problems.append(
                    DatastoreProblem(datastore: RetentionLayout.tree, detail: "key \"\(key)\": \(problem)"))
            }
        }
    }
}
