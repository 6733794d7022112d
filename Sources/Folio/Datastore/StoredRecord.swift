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

    static func encode(version: String, indexKeys: [(name: String, keys: [[UInt8]])], payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        let versionBytes = Array(version.utf8)
        var count = 0
        for entry in indexKeys { count += entry.keys.count }
        bytes.reserveCapacity(4 + versionBytes.count + payload.count + count * 24)
        bytes.append(1)
        bytes.append(UInt8(versionBytes.count))
        bytes.append(contentsOf: versionBytes)
        bytes.append(UInt8(truncatingIfNeeded: count))
        bytes.append(UInt8(truncatingIfNeeded: count >> 8))
        for entry in indexKeys {
            let name = Array(entry.name.utf8)
            for key in entry.keys {
                bytes.append(UInt8(name.count))
                bytes.append(contentsOf: name)
                bytes.append(UInt8(truncatingIfNeeded: key.count))
                bytes.append(UInt8(truncatingIfNeeded: key.count >> 8))
                bytes.append(contentsOf: key)
            }
        }
        bytes.append(contentsOf: payload)
        return bytes
    }

    /// The version tag and where the JSON starts, without building the index keys or
    /// copying the payload: all a read needs. Nil if the bytes are not a well-formed record.
    static func header(_ bytes: [UInt8]) -> (version: String, payloadStart: Int)? {
        bytes.withUnsafeBufferPointer { buffer -> (String, Int)? in
            guard buffer.count >= 4, buffer[0] == 1 else { return nil }
            let versionLength = Int(buffer[1])
            var position = 2 + versionLength
            guard position + 2 <= buffer.count else { return nil }
            let version = String(decoding: UnsafeBufferPointer(rebasing: buffer[2..<position]), as: UTF8.self)
            let count = Int(buffer[position]) | Int(buffer[position + 1]) << 8
            position += 2
            for _ in 0..<count {
                guard position < buffer.count else { return nil }
                position += 1 + Int(buffer[position])
                guard position + 2 <= buffer.count else { return nil }
                position += 2 + (Int(buffer[position]) | Int(buffer[position + 1]) << 8)
                guard position <= buffer.count else { return nil }
            }
            return (version, position)
        }
    }

    /// Decodes a stored record; nil if the bytes are not a well-formed record.
    static func decode(_ bytes: [UInt8]) -> StoredRecord? {
        var position = 0
        func byte() -> Int? {
            guard position < bytes.count else { return nil }
            defer { position += 1 }
            return Int(bytes[position])
        }
        func take(_ count: Int) -> [UInt8]? {
            guard count >= 0, position + count <= bytes.count else { return nil }
            defer { position += count }
            return Array(bytes[position..<(position + count)])
        }
        guard byte() == 1, let versionLength = byte(), let versionBytes = take(versionLength),
              let countLow = byte(), let countHigh = byte() else { return nil }
        var indexKeys: [String: [[UInt8]]] = [:]
        for _ in 0..<(countLow | countHigh << 8) {
            guard let nameLength = byte(), let name = take(nameLength),
                  let low = byte(), let high = byte(), let key = take(low | high << 8) else { return nil }
            indexKeys[String(decoding: name, as: UTF8.self), default: []].append(key)
        }
        return StoredRecord(version: String(decoding: versionBytes, as: UTF8.self), indexKeys: indexKeys,
                            payload: Array(bytes[position...]))
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
        var bytes: [UInt8] = [UInt8(truncatingIfNeeded: identifier.count), UInt8(truncatingIfNeeded: identifier.count >> 8)]
        bytes.reserveCapacity(2 + identifier.count + (record?.count ?? 0))
        bytes.append(contentsOf: identifier)
        if let record { bytes.append(contentsOf: record) }
        return bytes
    }

    /// The identifier key and (for direct entries) the record an entry value holds.
    static func decode(_ bytes: [UInt8]) -> (identifier: [UInt8], record: [UInt8]?)? {
        guard bytes.count >= 2 else { return nil }
        let length = Int(bytes[0]) | Int(bytes[1]) << 8
        guard bytes.count >= 2 + length else { return nil }
        let identifier = Array(bytes[2..<(2 + length)])
        return (identifier, bytes.count > 2 + length ? Array(bytes[(2 + length)...]) : nil)
    }
}
