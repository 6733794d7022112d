import FolioStorage

// The stored record value: what a record of the primary tree holds, and its layout.

/// A record as the primary tree stores it (Docs/Format.md §23):
///
///     u8       1 (record layout version)
///     u8       length of the version tag, then the tag (UTF-8): the format version's raw value
///     u16 LE   number of index keys, then for each:
///                u8 length of the index name, the name (UTF-8),
///                u16 LE length of the key, the key (the encoded index value)
///     ...      the JSON of the instance, to the end
///
/// Keeping the record's own index keys in its header lets an update or delete remove its
/// old index entries without decoding the old JSON (so even a record that no longer
/// decodes can be replaced), and lets `verify` check index/record agreement with no
/// knowledge of the Swift types.
struct StoredRecord: Equatable, Sendable {
    var version: String
    /// Index name → the record's encoded values for that index (sorted, distinct).
    var indexKeys: [String: [[UInt8]]]
    var payload: [UInt8]

    /// The record layout version, the first byte of every record (the layout above).
    static let layoutVersion: UInt8 = 1

    /// The widths of the header's fields (see the layout above).
    static let maximumVersionLength = Int(UInt8.max)
    static let maximumIndexKeyCount = Int(UInt16.max)
    static let maximumNameLength = Int(UInt8.max)
    static let maximumKeyLength = Int(UInt16.max)
}
