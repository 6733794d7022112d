import FolioStorage

// Encoding a stored record into its bytes (record layout version 1), and what refuses one.

extension StoredRecord {
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
    static func encode(
        version: String, indexKeys: [(name: String, keys: [[UInt8]])],
        payload: [UInt8]
    ) throws(EncodingProblem) -> [UInt8] {
        let versionBytes = Array(version.utf8)
        guard versionBytes.count <= maximumVersionLength else { throw .versionTooLong(versionBytes.count) }
        var count = 0
        var keyBytes = 0
        for entry in indexKeys {
            guard entry.name.utf8.count <= maximumNameLength else { throw .indexNameTooLong(entry.name) }
            for key in entry.keys {
                guard key.count <= maximumKeyLength else {
                    throw .indexValueTooLong(index: entry.name, length: key.count)
                }
                keyBytes += 3 + entry.name.utf8.count + key.count
            }
            count += entry.keys.count
        }
        guard count <= maximumIndexKeyCount else { throw .tooManyIndexValues(count) }
        var writer = ByteWriter(capacity: 4 + versionBytes.count + keyBytes + payload.count)
        writer.append(layoutVersion)
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
}
