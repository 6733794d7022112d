import FolioStorage

// The index entry format: an entry's key and value, and decoding a value.

/// Index entries (Docs/Format.md §24). The entry key is the encoded value for a one-to-one
/// index, and the encoded value followed by the encoded identifier otherwise (every key
/// encoding is prefix-free, so all entries of one value share that value's key as prefix).
/// The entry value is `u16 LE` identifier length, the identifier key, and for a direct
/// index the whole stored record.
enum IndexEntry {
    static func key(value: [UInt8], identifier: [UInt8], unique: Bool) -> [UInt8] {
        unique ? value : value + identifier
    }

    /// ``key(value:identifier:unique:)`` for a value read in place (a record header's slice).
    static func key(value: ArraySlice<UInt8>, identifier: [UInt8], unique: Bool) -> [UInt8] {
        var key = [UInt8]()
        key.reserveCapacity(value.count + (unique ? 0 : identifier.count))
        key += value
        if !unique { key += identifier }
        return key
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

    /// The identifier key and (for covering entries) the record an entry value holds.
    static func decode(_ bytes: [UInt8]) -> (identifier: [UInt8], record: [UInt8]?)? {
        decode(bytes[...]).map { ($0.identifier, $0.record.map { Array($0) }) }
    }

    /// ``decode(_:)`` of an entry value read in place: the covering record stays a slice of
    /// the page that holds it.
    static func decode(_ bytes: ArraySlice<UInt8>) -> (identifier: [UInt8], record: ArraySlice<UInt8>?)? {
        var reader = ByteReader(bytes)
        guard let length = reader.readUInt16(), let identifier = reader.readBytes(Int(length)) else { return nil }
        return (identifier, reader.isAtEnd ? nil : reader.readSlice(reader.remaining))
    }
}
