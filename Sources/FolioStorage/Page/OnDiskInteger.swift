/// Converting integers read from disk to `Int` without trapping.
///
/// Lengths and counts are stored as unsigned 32-bit (and offsets as 64-bit) values, but
/// `Int` is 32 bits on 32-bit platforms (watchOS on arm64_32), where `Int(UInt32)` traps
/// from 2³¹ on. A stored value that does not fit cannot describe anything this process
/// wrote or can hold: it is reported as corruption, never a trap.
enum OnDiskInteger {
    /// `value` as `Target`, or nil if it does not fit. Generic so a test on a 64-bit
    /// machine can check the rejection with a narrow target type.
    static func narrow<Target: FixedWidthInteger>(_ value: some BinaryInteger, to target: Target.Type) -> Target? {
        Target(exactly: value)
    }

    /// A stored length or count as `Int`, or nil if it does not fit this platform's `Int`.
    static func count(_ value: UInt32) -> Int? { narrow(value, to: Int.self) }
}

extension PageAddress {
    /// The page's length as a byte count, or a corruption error naming `file` if the stored
    /// length does not fit in `Int` (32-bit platforms).
    func byteCount(file: String) throws(StorageError) -> Int {
        guard let count = OnDiskInteger.count(length) else {
            throw .corruption(
                Corruption(
                    file: file, offset: offset,
                    detail: "page length \(length) does not fit this platform's Int"))
        }
        return count
    }
}
