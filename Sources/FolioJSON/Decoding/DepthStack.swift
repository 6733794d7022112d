/// The kinds of the open containers during validation: a bit each for the first 64
/// levels, an array beyond (no allocation for ordinary documents).
struct DepthStack {
    private var bits: UInt64 = 0
    private var deeper: [Bool] = []
    private(set) var count = 0

    @inline(__always)
    mutating func append(_ isObject: Bool) {
        if count < 64 {
            if isObject { bits |= 1 << UInt64(count) } else { bits &= ~(1 << UInt64(count)) }
        } else {
            deeper.append(isObject)
        }
        count += 1
    }

    @inline(__always)
    mutating func removeLast() {
        count -= 1
        if count >= 64 { deeper.removeLast() }
    }

    @inline(__always)
    var last: Bool? {
        guard count > 0 else { return nil }
        let top = count - 1
        return top < 64 ? (bits >> UInt64(top)) & 1 == 1 : deeper[top - 64]
    }
}
