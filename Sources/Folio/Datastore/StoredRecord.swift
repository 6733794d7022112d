import FolioStorage
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

    /// The widths of the header's fields (see the layout above).
    static let maximumVersionLength = Int(UInt8.max)
    static let maximumIndexKeyCount = Int(UInt16.max)
    static let maximumNameLength = Int(UInt8.max)
    static let maximumKeyLength = Int(UInt16.max)

    /// What a record header cannot represent. Refused before anything is written.
    enum EncodingProblem: Error, Equatable, CustomStringConvertible {
        case versionTooLong(Int)
        case tooManyIndexValues(Int)
        case indexNameTooLong(String)
        case indexValueTooLong(index: String, length: Int)

        var description: String {
            switch self {
            case .versionTooLong(let length):
                "its version tag is \(length) bytes long; a record holds at most \(StoredRecord.maximumVersionLength)"
            case .tooManyIndexValues(let count):
                "it has \(count) index values; a record holds at most \(StoredRecord.maximumIndexKeyCount) over all its indexes"
            case .indexNameTooLong(let name):
                "index name \(name) is longer than \(StoredRecord.maximumNameLength) bytes"
            case .indexValueTooLong(let index, let length):
                "a value of index \(index) encodes to \(length) bytes; a record holds at most \(StoredRecord.maximumKeyLength)"
            }
        }
    }

    /// The record's bytes. Every length is checked against its field's width first, so a
    /// record that cannot be represented is refused whole (never truncated into a header
    /// that no longer parses).
    static func encode(version: String, indexKeys: [(name: String, keys: [[UInt8]])],
                       payload: [UInt8]) throws(EncodingProblem) -> [UInt8] {
        let versionBytes = Array(version.utf8)
        guard versionBytes.count <= maximumVersionLength else { throw .versionTooLong(versionBytes.count) }
        var count = 0
        var keyBytes = 0
        for entry in indexKeys {
            guard entry.name.utf8.count <= maximumNameLength else { throw .indexNameTooLong(entry.name) }
            for key in entry.keys {
                guard key.count <= maximumKeyLength else { throw .indexValueTooLong(index: entry.name, length: key.count) }
                keyBytes += 3 + entry.name.utf8.count + key.count
            }
            count += entry.keys.count
        }
        guard count <= maximumIndexKeyCount else { throw .tooManyIndexValues(count) }
        var writer = ByteWriter(capacity: 4 + versionBytes.count + keyBytes + payload.count)
        writer.append(UInt8(1))
        writer.append(UInt8(versionBytes.count))
        writer.append(bytes: versionBytes)
        writer.append(UInt16(count))
        for entry in indexKeys {
            let name = Array(entry.name.utf8)
            for key in entry.keys {
                writer.append(UInt8(name.count))
                writer.append(bytes: name)
                writer.append(UInt16(key.count))
                writer.append(bytes: key)
            }
        }
        writer.append(bytes: payload)
        return writer.bytes
    }

    /// The version tag and where the JSON starts, without building the index keys or
    /// copying the payload: all a read needs. Nil if the bytes are not a well-formed record.
    static func header(_ bytes: [UInt8]) -> (version: String, payloadStart: Int)? {
        var reader = ByteReader(bytes)
        guard reader.readUInt8() == 1, let versionLength = reader.readUInt8() else { return nil }
        let versionStart = reader.position
        guard reader.skip(Int(versionLength)), let count = reader.readUInt16() else { return nil }
        let version = String(decoding: bytes[versionStart..<(versionStart + Int(versionLength))], as: UTF8.self)
        for _ in 0..<count {
            guard let nameLength = reader.readUInt8(), reader.skip(Int(nameLength)),
                  let keyLength = reader.readUInt16(), reader.skip(Int(keyLength)) else { return nil }
        }
        return (version, reader.position)
    }

    /// Decodes a stored record; nil if the bytes are not a well-formed record.
    static func decode(_ bytes: [UInt8]) -> StoredRecord? {
        var reader = ByteReader(bytes)
        guard reader.readUInt8() == 1, let versionLength = reader.readUInt8(),
              let versionBytes = reader.readBytes(Int(versionLength)), let count = reader.readUInt16() else { return nil }
        var indexKeys: [String: [[UInt8]]] = [:]
        for _ in 0..<count {
            guard let nameLength = reader.readUInt8(), let name = reader.readBytes(Int(nameLength)),
                  let keyLength = reader.readUInt16(), let key = reader.readBytes(Int(keyLength)) else { return nil }
            indexKeys[String(decoding: name, as: UTF8.self), default: []].append(key)
        }
        return StoredRecord(version: String(decoding: versionBytes, as: UTF8.self), indexKeys: indexKeys,
                            payload: reader.readBytes(reader.remaining) ?? [])
    }
}

/// Index entries (Docs/Format.md §24). The entry key is the encoded value for a one-to-one
/// index, and the encoded value followed by the encoded identifier otherwise (every key
/// encoding is prefix-free, so all entries of one value share that value's key as prefix).
/// The entry value is `u16 LE` identifier length, the identifier key, and for a direct
/// index the whole stored record.
enum IndexEntry {
    static func key(value: [UInt8], identifier: [UInt8], unique: Bool) -> [UInt8] {
        unique ? value : value + identifier
    }

    static func value(identifier: [UInt8], record: [UInt8]?) -> [UInt8] {
        // Identifier keys are engine keys (at most StorageLimits.maximumKeyLength, checked by
        // DatastoreSchema.encodeRecord before any entry is built), far below u16.
        precondition(identifier.count <= Int(UInt16.max), "an identifier key fits its u16 length")
        var writer = ByteWriter(capacity: 2 + identifier.count + (record?.count ?? 0))
        writer.append(UInt16(identifier.count))
        writer.append(bytes: identifier)
        if let record { writer.append(bytes: record) }
        return writer.bytes
    }

    /// The identifier key and (for direct entries) the record an entry value holds.
    static func decode(_ bytes: [UInt8]) -> (identifier: [UInt8], record: [UInt8]?)? {
        var reader = ByteReader(bytes)
        guard let length = reader.readUInt16(), let identifier = reader.readBytes(Int(length)) else { return nil }
        return (identifier, reader.isAtEnd ? nil : reader.readBytes(reader.remaining))
    }
}
