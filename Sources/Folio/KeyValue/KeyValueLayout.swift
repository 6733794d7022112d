import FolioJSON
import FolioStorage

/// Where and how the key-value store keeps its entries (Docs/Format.md §25):
///
///     folio/values    key name (UTF-8 bytes) → stored value: 0x01, then the value's JSON
///
/// One tree in the same store as the datastores, so a transaction covers both.
enum KeyValueLayout {
    static let tree = "folio/values"

    /// The first byte of every stored value: the layout of what follows (1: JSON of the
    /// value, to the end). A reader refuses other bytes rather than guess (§25).
    static let layoutByte: UInt8 = 1

    /// The tree key of `name`, or a refusal naming it if it is longer than the limit.
    static func key(_ name: String) throws(FolioError) -> [UInt8] {
        let bytes = Array(name.utf8)
        // Invariant: a key written is at most 512 bytes, below the engine's 1024 (§25).
        guard bytes.count <= ValueKeys.maximumNameLength else {
            throw .keyTooLong(key: String(name.prefix(64)), length: bytes.count, maximum: ValueKeys.maximumNameLength)
        }
        return bytes
    }

    /// `value` as stored: the layout byte, then its JSON.
    static func encode<Value: Encodable>(_ value: Value, key name: String) throws(FolioError) -> [UInt8] {
        var bytes: [UInt8] = [layoutByte]
        do {
            try FolioJSONEncoder().encode(value, appendingTo: &bytes)
        } catch {
            throw .valueEncodingFailed(key: name, reason: "\(error)")
        }
        return bytes
    }

    /// The value stored as `bytes`, decoded as `Value`; a typed error naming the key if the
    /// bytes are not a stored value or do not decode as `Value`.
    static func decode<Value: Decodable>(
        _ type: Value.Type, from bytes: [UInt8], key name: String
    ) throws(FolioError) -> Value {
        guard bytes.first == layoutByte else {
            throw .valueDecodingFailed(
                key: name, type: TypeName.of(Value.self),
                reason: bytes.isEmpty ? "the stored value is empty" : "unknown value layout \(bytes[0])")
        }
        do {
            return try FolioJSONDecoder().decode(Value.self, from: bytes[1...])
        } catch {
            throw .valueDecodingFailed(key: name, type: TypeName.of(Value.self), reason: "\(error)")
        }
    }
}
