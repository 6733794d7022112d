#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Operations on encoded keys as raw bytes: the order the B+tree uses, and range bounds.
public enum KeyBytes: Sendable {
    /// Compares two keys the way the B+tree orders them: unsigned bytes, lexicographically,
    /// with a proper prefix sorting first (`memcmp` on the common length, then length).
    ///
    /// - Returns: a negative number if `a` sorts first, zero if the keys are identical, a
    ///   positive number if `b` sorts first (always -1, 0 or 1).
    public static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { left in
            b.withUnsafeBytes { right in
                compare(left, right)
            }
        }
    }

    /// Compares two keys in place (for example, keys stored inside a page) in the same order as
    /// the array overload: unsigned bytes, lexicographically, a proper prefix first.
    ///
    /// - Returns: -1, 0 or 1.
    public static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let left = a.baseAddress, let right = b.baseAddress {
            let result = memcmp(left, right, common)
            if result != 0 {
                return result < 0 ? -1 : 1
            }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// The smallest key that sorts after every key starting with `prefix`, or nil if there is
    /// none (when `prefix` is empty or consists only of 0xFF bytes, every key above `prefix` starts
    /// with it, so the range is unbounded above).
    ///
    /// Keys starting with `prefix` are exactly the keys `k` with
    /// `prefix <= k < prefixUpperBound(prefix)`. To visit every composite key whose first
    /// component is `a`, scan `[KeyEncoding.encode(a), prefixUpperBound(KeyEncoding.encode(a)))`;
    /// this is exact because component encodings are prefix-free.
    ///
    /// The bound is `prefix` with its trailing 0xFF bytes removed and its last remaining byte
    /// incremented: `[0x61, 0x62]` gives `[0x61, 0x63]`, `[0x61, 0xFF]` gives `[0x62]`.
    public static func prefixUpperBound(_ prefix: [UInt8]) -> [UInt8]? {
        guard let last = prefix.lastIndex(where: { $0 != 0xFF }) else {
            return nil
        }
        var bound = Array(prefix[...last])
        bound[last] += 1
        return bound
    }
}
