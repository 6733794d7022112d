import FolioStorage
/// Where a datastore lives in the engine's named trees (Docs/Format.md §22):
///
///     folio/catalog              datastore key → catalog entry (JSON: types, versions, indexes)
///     records/<key>              identifier key → stored record
///     index/<key>/<index name>   index entry key → index entry
enum DatastoreLayout {
    static let catalogTree = "folio/catalog"

    static func recordsTree(_ key: String) -> String { "records/\(key)" }

    /// Whether `tree` is a datastore's records tree.
    static func isRecordsTree(_ tree: String) -> Bool { tree.hasPrefix("records/") }

    static func indexTree(_ key: String, _ index: String) -> String { "index/\(key)/\(index)" }

    /// The longest datastore key, so that every tree name fits the engine's 255 bytes.
    static let maximumKeyLength = 120
}
