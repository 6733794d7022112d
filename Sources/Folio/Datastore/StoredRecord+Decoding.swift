import FolioStorage

// Decoding a stored record's bytes (record layout version 1): the whole record, or only
// its header.

extension StoredRecord {
    /// The version tag and where the JSON starts, without building the index keys or
    /// copying the payload: all a read needs. Nil if the bytes are not a well-formed record.
    static func header(_ bytes: [UInt8]) -> (version: String, payloadStart: Int)? {
        var reader = ByteReader(bytes)
        guard reader.readUInt8() == layoutVersion, let versionLength = reader.readUInt8() else { return nil }
        let versionStart = reader.position
        guard reader.skip(Int(versionLength)), let count = reader.readUInt16() else { return nil }
        let version = String(decoding: bytes[versionStart..<(versionStart + Int(versionLength))], as: UTF8.self)
        for _ in 0..<count {
            guard let nameLength = reader.readUInt8(), reader.skip(Int(nameLength)),
                let keyLength = reader.readUInt16(), reader.skip(Int(keyLength))
            else { return nil }
        }
        return (version, reader.position)
    }

    /// Decodes a stored record; nil if the bytes are not a well-formed record.
    static func decode(_ bytes: [UInt8]) -> StoredRecord? {
        var reader = ByteReader(bytes)
        guard reader.readUInt8() == layoutVersion, let versionLength = reader.readUInt8(),
            let versionBytes = reader.readBytes(Int(versionLength)), let count = reader.readUInt16()
        else { return nil }
        var indexKeys: [String: [[UInt8]]] = [:]
        for _ in 0..<count {
            guard let nameLength = reader.readUInt8(), let name = reader.readBytes(Int(nameLength)),
                let keyLength = reader.readUInt16(), let key = reader.readBytes(Int(keyLength))
            else { return nil }
            indexKeys[String(decoding: name, as: UTF8.self), default: []].append(key)
        }
        return StoredRecord(
            version: String(decoding: versionBytes, as: UTF8.self), indexKeys: indexKeys,
            payload: reader.readBytes(reader.remaining) ?? [])
    }
}
