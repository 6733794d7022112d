#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// `UUID` as a key component: its 16 bytes in order, so keys sort as the bytes do
// (Docs/Keys.md).
extension UUID: KeyComponent {
    /// Appends the 16 bytes of `uuid` in tuple order (the order of the hexadecimal digits in
    /// `uuidString`). This is the order Foundation's `UUID.<` uses: unsigned bytes compared from
    /// the first, which for version 7 UUIDs is creation-time order.
    public func appendKey(to encoder: inout KeyEncoder) {
        withUnsafeBytes(of: uuid) { raw in
            encoder.appendVerbatim(raw)
        }
    }

    /// Reads 16 bytes; every 16-byte value is a valid UUID.
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> UUID {
        let bytes = try decoder.readFixed(16, "a UUID")
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { raw in
            raw.copyBytes(from: bytes)
        }
        return UUID(uuid: value)
    }
}
