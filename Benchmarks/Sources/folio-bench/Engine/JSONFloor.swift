import Foundation

/// What JSON costs on its own: Foundation's `JSONEncoder` / `JSONDecoder` on the crud
/// records, one record per call as a store encodes them, with no store at all.
enum JSONFloor {
    /// Encodes each record with one reused encoder; returns the total bytes.
    static func encodeAll(_ records: [CrudRecord], with encoder: JSONEncoder) throws -> [Data] {
        var encoded: [Data] = []
        encoded.reserveCapacity(records.count)
        for record in records { encoded.append(try encoder.encode(record)) }
        return encoded
    }

    /// Decodes each blob with one reused decoder; returns a checksum of the ids.
    static func decodeAll(_ blobs: [Data], with decoder: JSONDecoder) throws -> Int {
        var checksum = 0
        for blob in blobs {
            let record = try decoder.decode(CrudRecord.self, from: blob)
            checksum &+= Int(record.id) &+ record.priority
        }
        return checksum
    }
}
