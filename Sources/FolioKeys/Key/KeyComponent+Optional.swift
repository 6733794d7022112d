// Optionals as key components: a marker byte that sorts `nil` before every value, then
// the wrapped value's own encoding (Docs/Keys.md).
extension Optional: KeyComponent where Wrapped: KeyComponent {
    /// Appends 0x00 for `nil`, or 0x01 followed by the wrapped value's encoding. `nil` sorts
    /// before every value (the tag decides first), and the tag keeps the encoding prefix-free:
    /// without it, `nil` would have to be an empty encoding, a prefix of everything.
    public func appendKey(to encoder: inout KeyEncoder) {
        switch self {
        case .none:
            encoder.appendByte(0x00)
        case .some(let wrapped):
            encoder.appendByte(0x01)
            encoder.append(wrapped)
        }
    }

    /// Reads the tag byte (0x00 or 0x01; anything else is rejected) and, after 0x01, the value.
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Wrapped? {
        let position = decoder.offset
        switch try decoder.readByte("an Optional tag") {
        case 0x00: return nil
        case 0x01: return .some(try decoder.decode(Wrapped.self))
        case let byte:
            throw decoder.invalid(
                "an Optional tag must be 0x00 or 0x01, found 0x\(String(byte, radix: 16))", at: position)
        }
    }
}
