#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Byte strings use the same escaping as strings, without normalisation: 0x00 becomes 0x00 0xFF
// and the string ends with 0x00 0x01. Their order is unsigned lexicographic byte order with a
// proper prefix first. `[UInt8]` and `Data` holding the same bytes have the same key.

extension Array: KeyComponent where Element == UInt8 {
    /// Appends the bytes with 0x00 escaped as 0x00 0xFF, then 0x00 0x01.
    public func appendKey(to encoder: inout KeyEncoder) {
        withUnsafeBufferPointer { encoder.appendEscaped($0) }
    }

    /// Reads an escaped byte string.
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> [UInt8] {
        try decoder.readEscaped("a byte string")
    }
}

extension Data: KeyComponent {
    /// Appends the bytes with 0x00 escaped as 0x00 0xFF, then 0x00 0x01 (the same key as the
    /// equal `[UInt8]`).
    public func appendKey(to encoder: inout KeyEncoder) {
        withUnsafeBytes { raw in
            encoder.appendEscaped(raw.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Reads an escaped byte string.
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Data {
        try decoder.readEscaped("a Data value") { Data(buffer: $0) }
    }
}
