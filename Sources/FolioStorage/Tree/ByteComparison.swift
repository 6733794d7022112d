/// Byte-string order, the only order the tree knows (Docs/Architecture.md invariant 8): keys are
/// compared with memcmp, and a proper prefix sorts first.
///
/// Node keys are slices: of the page they were read from (a committed page is read in place,
/// its keys never copied out) or of the array a transaction was given. Comparisons run on the
/// slices' own bytes.
enum ByteOrder {
    /// Negative, zero or positive as `a` sorts before, equal to or after `b`.
    @inline(__always)
    static func compare(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Int {
        a.withUnsafeBytes { left in b.withUnsafeBytes { right in compare(left, right) } }
    }

    /// The order of ``KeyBytes/compare(_:_:)-(UnsafeRawBufferPointer,UnsafeRawBufferPointer)``
    /// (memcmp, then length), computed inline eight bytes at a time: keys are short (an
    /// identifier, an index value), and a descent compares a few dozen of them, where a call
    /// to memcmp per comparison cost more than the comparison itself. Eight bytes read as a
    /// big-endian integer order as the bytes do. Returns -1, 0 or 1.
    @inline(__always)
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let left = a.baseAddress, let right = b.baseAddress {
            var offset = 0
            while offset + 8 <= common {
                let x = UInt64(bigEndian: left.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                let y = UInt64(bigEndian: right.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                if x != y { return x < y ? -1 : 1 }
                offset += 8
            }
            while offset < common {
                let x = left.load(fromByteOffset: offset, as: UInt8.self)
                let y = right.load(fromByteOffset: offset, as: UInt8.self)
                if x != y { return x < y ? -1 : 1 }
                offset += 1
            }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// Negative, zero or positive as `a` sorts before, equal to or after `b`.
    @inline(__always)
    static func compare(_ a: ArraySlice<UInt8>, _ b: [UInt8]) -> Int { compare(a, b[...]) }

    /// Negative, zero or positive as `a` sorts before, equal to or after `b`.
    @inline(__always)
    static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int { compare(a[...], b[...]) }

    /// Index of the first key `>= key` (`keys.count` if none).
    @inline(__always)
    static func lowerBound(_ keys: [ArraySlice<UInt8>], _ key: ArraySlice<UInt8>) -> Int {
        key.withUnsafeBytes { probe in
            var low = 0, high = keys.count
            while low < high {
                let mid = (low + high) >> 1
                if keys[mid].withUnsafeBytes({ compare($0, probe) }) < 0 { low = mid + 1 } else { high = mid }
            }
            return low
        }
    }

    /// Index of the first key `>= key` (`keys.count` if none).
    @inline(__always)
    static func lowerBound(_ keys: [ArraySlice<UInt8>], _ key: [UInt8]) -> Int { lowerBound(keys, key[...]) }

    /// Index of the first key `> key` (`keys.count` if none).
    @inline(__always)
    static func upperBound(_ keys: [ArraySlice<UInt8>], _ key: ArraySlice<UInt8>) -> Int {
        key.withUnsafeBytes { probe in
            var low = 0, high = keys.count
            while low < high {
                let mid = (low + high) >> 1
                if keys[mid].withUnsafeBytes({ compare($0, probe) }) <= 0 { low = mid + 1 } else { high = mid }
            }
            return low
        }
    }

    /// Index of the first key `> key` (`keys.count` if none).
    @inline(__always)
    static func upperBound(_ keys: [ArraySlice<UInt8>], _ key: [UInt8]) -> Int { upperBound(keys, key[...]) }

    /// The shortest byte string `s` with `left < s <= right`, for a separator between two
    /// adjacent leaves (suffix truncation: shorter separators, wider branches). Requires
    /// `left < right`. A prefix of `right`, so a slice of its bytes: no copy.
    static func shortestSeparator(after left: ArraySlice<UInt8>, upTo right: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var common = 0
        let leftStart = left.startIndex, rightStart = right.startIndex
        while common < left.count && common < right.count && left[leftStart + common] == right[rightStart + common] {
            common += 1
        }
        return right[rightStart..<(rightStart + min(right.count, common + 1))]
    }
}
