import FolioStorage

// A record's bytes, and the index keys it is stored with: computed from the record as it
// will be read back, not from the instance that was handed in.

extension DatastoreSchema {
    /// The stored bytes of `instance` in the current version, with its index keys;
    /// `identifier` is its identifier key (``identifierKey(of:)``).
    ///
    /// Invariant: a record's index keys are the values its decoded record has. Queries
    /// evaluate predicates on decoded records, so an index must hold what a reader decodes,
    /// or a plan that reads the index would miss records a scan returns. The instance handed
    /// to `persist` can differ from what reads back: a coder setting that loses precision
    /// (ISO 8601 dates keep whole seconds), a `Codable` conformance that normalises, a
    /// property the coding keys leave out. So the JSON is decoded again, as a read would
    /// decode it, and the keys come from that.
    ///
    /// Invariant: a record reads back with the identifier it is stored under. Checked on
    /// every write, with or without indexes: the identifier's type says how its keys compare,
    /// not whether the record's `Codable` conformance keeps it (an `init(from:)` that
    /// normalises it, an `id = UUID()` the coding keys leave out). A record that came back
    /// with another identifier would be found by neither, and a point query, which trusts
    /// the key it reads, would return it for an identifier it does not have.
    func encodeRecord(
        _ instance: Format.Instance, identifier: [UInt8]
    ) throws(FolioError) -> (record: [UInt8], keys: [[[UInt8]]]) {
        // Invariant: an identifier key fits the engine's key limit (so also the u16 length of
        // an index entry, §24) before any entry is built or written.
        let identifierLength = identifier.count
        guard identifierLength <= StorageLimits.maximumKeyLength else {
            throw .storage(.keyTooLarge(length: identifierLength, maximum: StorageLimits.maximumKeyLength))
        }
        let describeIdentifier = { String(describing: instance[keyPath: self.identifierPath]) }
        guard !indexes.isEmpty else {
            // No index values to list, so the header comes first and the JSON is appended to
            // the same buffer, read back where it lies: the record layout ends with the
            // payload, which has no length field (Docs/Format.md §23).
            var record = try encodeRecord(
                version: currentTag, indexKeys: [], payload: [], identifier: describeIdentifier)
            let payloadStart = record.count
            try encodeJSON(instance, appendingTo: &record, identifier: describeIdentifier)
            _ = try readBack(record[payloadStart...], identifier: identifier, describe: describeIdentifier)
            return (record, [])
        }
        var payload: [UInt8] = []
        try encodeJSON(instance, appendingTo: &payload, identifier: describeIdentifier)
        let stored = try readBack(payload[...], identifier: identifier, describe: describeIdentifier)
        var keys: [[[UInt8]]] = []
        keys.reserveCapacity(indexes.count)
        var named: [(name: String, keys: [[UInt8]])] = []
        named.reserveCapacity(indexes.count)
        for index in indexes {
            let values = indexValues(index, of: stored, identifier: identifier)
            keys.append(values)
            named.append((index.name, values))
        }
        let record = try encodeRecord(
            version: currentTag, indexKeys: named, payload: payload, identifier: describeIdentifier)
        return (record, keys)
    }

    private func encodeJSON(
        _ instance: Format.Instance, appendingTo bytes: inout [UInt8], identifier: () -> String
    ) throws(FolioError) {
        do {
            try encoder.encode(instance, appendingTo: &bytes)
        } catch {
            throw .encodingFailed(datastore: key, identifier: identifier(), reason: "\(error)")
        }
    }

    /// `payload` decoded as a read of the current version decodes it. A record that would
    /// not read back, or whose identifier would read back as another one (it could then be
    /// found neither by the identifier it is stored under nor by the one it reads back
    /// with), is refused before anything is written.
    private func readBack(
        _ payload: ArraySlice<UInt8>, identifier: [UInt8], describe: () -> String
    ) throws(FolioError) -> Format.Instance {
        let stored: Format.Instance
        do {
            stored = try Format.decode(Format.currentVersion, from: payload, using: decoder)
        } catch {
            throw .encodingFailed(
                datastore: key, identifier: describe(),
                reason: "the record would not read back (recordDecoder must read what recordEncoder writes): \(error)")
        }
        let storedIdentifier = identifierKey(of: stored)
        guard storedIdentifier == identifier else {
            throw .encodingFailed(
                datastore: key, identifier: describe(),
                reason: "its identifier would read back as \(self.describe(identifierKey: storedIdentifier)): "
                    + "the record coders or the type's Codable conformance do not keep it")
        }
        return stored
    }
}
