import Foundation

/// Strings as quoted JSON text, escaped as Foundation escapes them.
extension JSONByteWriter {
    /// Writes `string` as a quoted JSON string: `"`, `\` and control characters escaped,
    /// everything else as its UTF-8 bytes.
    @inline(__always)
    mutating func putString(_ string: String) {
        var string = string
        string.withUTF8 { putQuoted($0) }
    }

    mutating func putQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        let length = utf8.count
        reserve(length &+ 2)
        base[count] = UInt8(ascii: "\"")
        count &+= 1
        guard let source = utf8.baseAddress else {
            put(UInt8(ascii: "\""))
            return
        }
        var runStart = 0
        var index = 0
        // Eight bytes at a time while none needs escaping (< 0x20, `"` or `\`).
        let raw = UnsafeRawPointer(source)
        while index &+ 8 <= length {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let high: UInt64 = 0x8080_8080_8080_8080
            let ones: UInt64 = 0x0101_0101_0101_0101
            let control = (word &- ones &* 0x20) & ~word
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let hits = (control | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)) & high
            if hits != 0 { break }
            index &+= 8
        }
        while index < length {
            let byte = source[index]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C {
                if index > runStart {
                    reserve(index &- runStart)
                    (base + count).update(from: source + runStart, count: index &- runStart)
                    count &+= index &- runStart
                }
                putEscape(byte)
                runStart = index &+ 1
            }
            index &+= 1
        }
        let tail = length &- runStart
        reserve(tail &+ 1)
        if tail > 0 {
            (base + count).update(from: source + runStart, count: tail)
            count &+= tail
        }
        base[count] = UInt8(ascii: "\"")
        count &+= 1
    }

    @inline(never)
    mutating func putEscape(_ byte: UInt8) {
        switch byte {
        case 0x22: put(UInt8(ascii: "\\"), UInt8(ascii: "\""))
        case 0x5C: put(UInt8(ascii: "\\"), UInt8(ascii: "\\"))
        case 0x0A: put(UInt8(ascii: "\\"), UInt8(ascii: "n"))
        case 0x0D: put(UInt8(ascii: "\\"), UInt8(ascii: "r"))
        case 0x09: put(UInt8(ascii: "\\"), UInt8(ascii: "t"))
        case 0x08: put(UInt8(ascii: "\\"), UInt8(ascii: "b"))
        case 0x0C: put(UInt8(ascii: "\\"), UInt8(ascii: "f"))
        default:
            let hex: StaticString = "0123456789abcdef"
            reserve(6)
            base[count] = UInt8(ascii: "\\"); base[count &+ 1] = UInt8(ascii: "u")
            base[count &+ 2] = UInt8(ascii: "0"); base[count &+ 3] = UInt8(ascii: "0")
            base[count &+ 4] = hex.utf8Start[Int(byte >> 4)]
            base[count &+ 5] = hex.utf8Start[Int(byte & 0xF)]
            count &+= 6
        }
    }
}
