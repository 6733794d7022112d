/// `false` is the byte 0x00 and `true` the byte 0x01, so `false` sorts first (as in
/// `Comparable` orderings of booleans elsewhere, e.g. SQL).
extension Bool: KeyComponent {
    /// Appends 0x00 for `false` or 0x01 for `true`.
    public func appendKey(to encoder: inout KeyEncoder) {
        encoder.appendByte(self ? 0x01 : 0x00)
    }

    /// Reads one byte; anything other than 0x00 or 0x01 is rejected.
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Bool {
        let position = decoder.offset
        switch try decoder.readByte("a Bool") {
        case 0x00: return false
        case 0x01: return true
        case let byte:
            throw decoder.invalid("a Bool must be 0x00 or 0x01, found 0x\(String(byte, radix: 16))", at: position)
        }
    }
}
