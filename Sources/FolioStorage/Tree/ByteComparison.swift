/// Byte-string order, the only order the tree knows (Docs/Architecture.md invariant 8): keys are
/// compared with memcmp, and a proper prefix sorts first.
enum ByteOrder {
    /// Negative, zero or positive as `a` sorts before, equal to or after `b`.
    @inline(__always)
    static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int { KeyBytes.compare(a, b) }

    /// Index of the first key `>= key` (`keys.count` if none).
    @inline(__always)
    static func lowerBound(_ keys: [[UInt8]], _ key: [UInt8]) -> Int {
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) >> 1
            if compare(keys[mid], key) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Index of the first key `> key` (`keys.count` if none).
    @inline(__always)
    static func upperBound(_ keys: [[UInt8]], _ key: [UInt8]) -> Int {
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) >> 1
            if compare(keys[mid], key) <= 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The shortest byte string `s` with `left < s <= right`, for a separator between two
    /// adjacent leaves (suffix truncation: shorter separators, wider branches). Requires
    /// `left < right`.
    static func shortestSeparator(after left: [UInt8], upTo right: [UInt8]) -> [UInt8] {
        var common = 0
        while common < left.count && common < right.count && left[common] == right[common] { common += 1 }
        return Array(right[0..<min(right.count, common + 1)])
    }
}
