import Foundation
import Folio

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

    /// The same with Folio's encoder (`FolioJSONEncoder`), for any `Encodable` records.
    static func encodeAll<Record: Encodable>(_ records: [Record], with encoder: FolioJSONEncoder) throws -> [[UInt8]] {
        var encoded: [[UInt8]] = []
        encoded.reserveCapacity(records.count)
        for record in records { encoded.append(try encoder.encode(record)) }
        return encoded
    }

    /// Foundation's encoder on any `Encodable` records.
    static func encodeAll<Record: Encodable>(_ records: [Record], with encoder: JSONEncoder) throws -> [Data] {
        var encoded: [Data] = []
        encoded.reserveCapacity(records.count)
        for record in records { encoded.append(try encoder.encode(record)) }
        return encoded
    }

    /// Folio's decoder on the crud records; returns the same checksum as Foundation's row.
    static func decodeAll(_ blobs: [[UInt8]], with decoder: FolioJSONDecoder) throws -> Int {
        var checksum = 0
        for blob in blobs {
            let record = try decoder.decode(CrudRecord.self, from: blob)
            checksum &+= Int(record.id) &+ record.priority
        }
        return checksum
    }

    /// A checksum of nested records decoded by `decode` (ids and line quantities).
    static func decodeNested<Blob>(_ blobs: [Blob], _ decode: (Blob) throws -> NestedRecord) rethrows -> Int {
        var checksum = 0
        for blob in blobs {
            let record = try decode(blob)
            checksum &+= Int(record.id) &+ record.lines.reduce(0) { $0 &+ $1.quantity }
        }
        return checksum
    }
}
