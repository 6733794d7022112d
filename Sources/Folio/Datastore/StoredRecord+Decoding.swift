import FolioStorage

// Decoding a stored record's bytes (record layout version 1): the whole record, or only
// its header.

extension StoredRecord {
    /// The version tag and where the JSON starts, without building the index keys or
    /// copying the payload: all a read needs. Nil if the bytes are not a well-formed record.
    static func header(_ bytes: ArraySlice<UInt8>) -> (version: String, payloadStart: Int)? {
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

    /// Whether two stored records hold the same instance: the same version tag and the same
    /// JSON, whatever index keys their headers carry (an index build rewrites every record's
    /// header and leaves its JSON as it was). False if either is malformed.
    static func sameInstance(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard let left = header(a[...]), let right = header(b[...]), left.version == right.version else { return false }
        return a[left.payloadStart...].elementsEqual(b[right.payloadStart...])
    }

    /// ``sameInstance(_:_:)`` of two sides of a difference, nil for a side without a record.
    static func sameStoredInstance(_ a: [UInt8]?, _ b: [UInt8]?) -> Bool {
        guard let a, let b else { return false }
        return sameInstance(a, b)
    }

    /// Where the JSON starts: the length of the header (layout, version tag, index keys).
    /// Nil if the bytes are not a well-formed record.
    static func headerLength(_ bytes: [UInt8]) -> Int? {
        var reader = ByteReader(bytes)
        guard reader.readUInt8() == layoutVersion, let versionLength = reader.readUInt8(),
            reader.skip(Int(versionLength)), let count = reader.readUInt16()
        else { return nil }
        for _ in 0..<count {
            guard let nameLength = reader.readUInt8(), reader.skip(Int(nameLength)),
                let keyLength = reader.readUInt16(), reader.skip(Int(keyLength))
            else { return nil }
        }
        return reader.position
    }

    /// Whether two records have the same header, byte for byte: the same version tag and
    /// the same index keys, in the same order (so the same entries in every index that
    /// holds references). False if either is malformed.
    static func sameHeader(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard let length = headerLength(a), headerLength(b) == length else { return false }
        return a[..<length] == b[..<length]
    }

    /// Calls `body` with each index key the header lists, as slices of `bytes` (the index's
    /// name, then the key): the old entries a batch change removes, read from the bytes it
    /// already holds, without building the index key table or copying the payload. False
    /// (after perhaps some calls) if the bytes are not a well-formed record.
    static func forEachIndexKey(
        in bytes: ArraySlice<UInt8>, _ body: (_ name: ArraySlice<UInt8>, _ key: ArraySlice<UInt8>) -> Void
    ) -> Bool {
        var reader = ByteReader(bytes)
        guard reader.readUInt8() == layoutVersion, let versionLength = reader.readUInt8(),
            reader.skip(Int(versionLength)), let count = reader.readUInt16()
        else { return false }
        for _ in 0..<count {
            guard let nameLength = reader.readUInt8() else { return false }
            let nameStart = reader.position
            guard reader.skip(Int(nameLength)), let keyLength = reader.readUInt16() else { return false }
            let keyStart = reader.position
            guard reader.skip(Int(keyLength)) else { return false }
            body(bytes[nameStart..<(nameStart + Int(nameLength))], bytes[keyStart..<(keyStart + Int(keyLength))])
        }
        return true
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
