/// Encodes and decodes whole composite keys in one call.
///
/// A composite key is the concatenation of its components' encodings, so
/// `KeyEncoding.encode(a, b)` sorts exactly as the tuple `(a, b)` does:
///
/// ```swift
/// let key = KeyEncoding.encode("alice", Int64(42), true)
/// let (name, id, active) = try KeyEncoding.decode(key, as: String.self, Int64.self, Bool.self)
/// ```
public enum KeyEncoding: Sendable {
    /// The key of the tuple `(values...)`: each component's encoding, in order.
    @inlinable
    public static func encode<each T: KeyComponent>(_ values: repeat each T) -> [UInt8] {
        var encoder = KeyEncoder()
        repeat encoder.append(each values)
        return encoder.bytes
    }

    /// Decodes a key produced by ``encode(_:)`` with the same component types, in order.
    ///
    /// Throws ``StorageError/invalidKey(reason:)`` if any component is malformed or if bytes
    /// remain after the last component (the key has more components than `types` names).
    @inlinable
    public static func decode<each T: KeyComponent>(
        _ key: [UInt8], as types: repeat (each T).Type
    ) throws(StorageError) -> (repeat each T) {
        var decoder = KeyDecoder(key)
        let values = (repeat try decoder.decode(each types))
        guard decoder.isAtEnd else {
            throw StorageError.invalidKey(
                reason:
                    "\(key.count - decoder.offset) unexpected bytes after the last component, at byte \(decoder.offset)"
            )
        }
        return values
    }
}
