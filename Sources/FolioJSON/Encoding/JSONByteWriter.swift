import Foundation

/// A growable byte buffer the encoder writes JSON text into, through a raw pointer (no
/// per-byte uniqueness or bounds checks). Owned by one `EncodingState`; freed by it.
struct JSONByteWriter {
    var base: UnsafeMutablePointer<UInt8>
    var count: Int = 0
    var capacity: Int

    init(capacity: Int = 256) {
        self.capacity = capacity
        self.base = .allocate(capacity: capacity)
    }

    func deallocate() { base.deallocate() }

    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count &+ extra > capacity { grow(extra) }
    }

    @inline(never)
    mutating func grow(_ extra: Int) {
        var newCapacity = capacity &* 2
        while newCapacity < count + extra { newCapacity &*= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    mutating func put(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count &+= 1
    }

    @inline(__always)
    mutating func put(_ a: UInt8, _ b: UInt8) {
        reserve(2)
        base[count] = a
        base[count &+ 1] = b
        count &+= 2
    }

    mutating func put(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard buffer.count > 0 else { return }
        reserve(buffer.count)
        (base + count).update(from: buffer.baseAddress!, count: buffer.count)
        count &+= buffer.count
    }

    mutating func put(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { put($0) }
    }

    /// Writes `text` as is (it must already be valid JSON text, such as a number).
    mutating func putRaw(_ text: String) {
        var text = text
        text.withUTF8 { put($0) }
    }

    mutating func putNull() {
        reserve(4)
        base[count] = UInt8(ascii: "n"); base[count &+ 1] = UInt8(ascii: "u")
        base[count &+ 2] = UInt8(ascii: "l"); base[count &+ 3] = UInt8(ascii: "l")
        count &+= 4
    }

    mutating func putBool(_ value: Bool) {
        if value {
            reserve(4)
            base[count] = UInt8(ascii: "t"); base[count &+ 1] = UInt8(ascii: "r")
            base[count &+ 2] = UInt8(ascii: "u"); base[count &+ 3] = UInt8(ascii: "e")
            count &+= 4
        } else {
            reserve(5)
            base[count] = UInt8(ascii: "f"); base[count &+ 1] = UInt8(ascii: "a")
            base[count &+ 2] = UInt8(ascii: "l"); base[count &+ 3] = UInt8(ascii: "s")
            base[count &+ 4] = UInt8(ascii: "e")
            count &+= 5
        }
    }

    // MARK: Integers

    /// Writes the decimal digits of `value` (at most 20).
    @inline(__always)
    mutating func putUnsigned(_ value: UInt64) {
        if value < 10 {
            put(UInt8(truncatingIfNeeded: value) &+ 0x30)
            return
        }
        var digits = 1
        var rest = value / 10
        while rest != 0 { digits &+= 1; rest /= 10 }
        reserve(digits)
        var position = count &+ digits
        var remaining = value
        while position > count {
            position &-= 1
            let quotient = remaining / 10
            base[position] = UInt8(truncatingIfNeeded: remaining &- quotient &* 10) &+ 0x30
            remaining = quotient
        }
        count &+= digits
    }

    @inline(__always)
    mutating func putSigned(_ value: Int64) {
        if value < 0 {
            put(UInt8(ascii: "-"))
            putUnsigned(value.magnitude)
        } else {
            putUnsigned(UInt64(value))
        }
    }

    mutating func putUnsigned128(_ value: UInt128) {
        if value <= UInt128(UInt64.max) {
            putUnsigned(UInt64(value))
            return
        }
        var digits: [UInt8] = []
        var remaining = value
        while remaining != 0 {
            let (quotient, digit) = remaining.quotientAndRemainder(dividingBy: 10)
            digits.append(UInt8(truncatingIfNeeded: digit) &+ 0x30)
            remaining = quotient
        }
        reserve(digits.count)
        for digit in digits.reversed() { base[count] = digit; count &+= 1 }
    }

    mutating func putSigned128(_ value: Int128) {
        if value < 0 { put(UInt8(ascii: "-")) }
        putUnsigned128(value.magnitude)
    }

    // MARK: Floating point

    /// Writes a finite `Double` in its shortest round-tripping form, as Foundation does:
    /// `description`, with a trailing `.0` dropped (`5`, `-0`, `0.1`, `1e-05`, `1e+300`).
    mutating func putFinite(_ value: Double) {
        // Whole numbers within 2^53 are exact integers: write their digits directly.
        if value == value.rounded(.towardZero), value.magnitude < 9_007_199_254_740_992 {
            if value == 0 {
                if value.sign == .minus { put(UInt8(ascii: "-"), UInt8(ascii: "0")) } else { put(UInt8(ascii: "0")) }
                return
            }
            putSigned(Int64(value))
            return
        }
        if value.magnitude < 1e9, putShortDecimal(value) { return }
        putFloatDescription(value.description)
    }

    /// Writes `value` with at most 4 decimals when such a decimal reads back as `value`
    /// (prices, scores: most values people type). Below 1e9 a double's spacing is far
    /// finer than 1e-4, so the first (fewest-decimals) decimal found is the only one of
    /// its length that reads back, hence the shortest, as `description` would write it.
    private mutating func putShortDecimal(_ value: Double) -> Bool {
        let magnitude = value.magnitude
        var scale = 10.0
        var decimals = 1
        while decimals <= 4 {
            let scaled = (magnitude * scale).rounded()
            if scaled / scale == magnitude {
                let digits = UInt64(scaled)
                let whole = digits / UInt64(scale)
                var fraction = digits - whole * UInt64(scale)
                if value < 0 { put(UInt8(ascii: "-")) }
                putUnsigned(whole)
                reserve(decimals + 1)
                base[count] = UInt8(ascii: ".")
                var position = count + decimals
                while position > count {
                    base[position] = UInt8(truncatingIfNeeded: fraction % 10) &+ 0x30
                    fraction /= 10
                    position -= 1
                }
                count += decimals + 1
                return true
            }
            scale *= 10
            decimals += 1
        }
        return false
    }

    /// Writes a finite `Float` in its shortest round-tripping form, as Foundation does.
    mutating func putFinite(_ value: Float) {
        if value == value.rounded(.towardZero), value.magnitude < 16_777_216 {
            if value == 0 {
                if value.sign == .minus { put(UInt8(ascii: "-"), UInt8(ascii: "0")) } else { put(UInt8(ascii: "0")) }
                return
            }
            putSigned(Int64(value))
            return
        }
        putFloatDescription(value.description)
    }

    mutating func putFloatDescription(_ description: String) {
        var text = description
        text.withUTF8 { utf8 in
            var length = utf8.count
            if length >= 2, utf8[length - 2] == UInt8(ascii: "."), utf8[length - 1] == UInt8(ascii: "0") {
                length -= 2
            }
            put(UnsafeBufferPointer(rebasing: utf8[0..<length]))
        }
    }

    // MARK: Strings

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

    // MARK: Base64

    /// Writes `data` as a quoted base64 string with `=` padding, as `Data.base64EncodedString()`.
    mutating func putBase64(_ data: Data) {
        let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        let table = alphabet.utf8Start
        let length = data.count
        reserve((length + 2) / 3 * 4 + 2)
        base[count] = UInt8(ascii: "\"")
        count &+= 1
        data.withUnsafeBytes { raw in
            let input = raw.bindMemory(to: UInt8.self)
            var out = base + count
            var index = 0
            while index &+ 3 <= length {
                let chunk = UInt32(input[index]) << 16 | UInt32(input[index &+ 1]) << 8 | UInt32(input[index &+ 2])
                out[0] = table[Int(chunk >> 18 & 0x3F)]
                out[1] = table[Int(chunk >> 12 & 0x3F)]
                out[2] = table[Int(chunk >> 6 & 0x3F)]
                out[3] = table[Int(chunk & 0x3F)]
                out += 4
                index &+= 3
            }
            let rest = length &- index
            if rest == 1 {
                let chunk = UInt32(input[index]) << 16
                out[0] = table[Int(chunk >> 18 & 0x3F)]
                out[1] = table[Int(chunk >> 12 & 0x3F)]
                out[2] = UInt8(ascii: "="); out[3] = UInt8(ascii: "=")
                out += 4
            } else if rest == 2 {
                let chunk = UInt32(input[index]) << 16 | UInt32(input[index &+ 1]) << 8
                out[0] = table[Int(chunk >> 18 & 0x3F)]
                out[1] = table[Int(chunk >> 12 & 0x3F)]
                out[2] = table[Int(chunk >> 6 & 0x3F)]
                out[3] = UInt8(ascii: "=")
                out += 4
            }
            count = out - base
        }
        base[count] = UInt8(ascii: "\"")
        count &+= 1
    }

    // MARK: ISO 8601

    /// Writes `date` as Foundation's `.iso8601` strategy does: `"yyyy-MM-ddTHH:mm:ssZ"` in
    /// UTC, seconds rounded down. Years 1583...9999 are computed here (proleptic Gregorian,
    /// which is Foundation's calendar there); other dates use Foundation's own formatter,
    /// whose calendar switches to Julian before the Gregorian reform.
    mutating func putISO8601(_ date: Date) {
        let seconds = date.timeIntervalSince1970
        // 1583-01-01T00:00:00Z ... 9999-12-31T23:59:59Z
        guard seconds.isFinite, seconds >= -12_212_553_600, seconds < 253_402_300_800 else {
            putString(date.formatted(.iso8601))
            return
        }
        // Rounded down where the date is stored (seconds since 2001), then moved to 1970:
        // adding 978,307,200 first would round 0.9999999 s before a second up to it.
        let whole = Int64(date.timeIntervalSinceReferenceDate.rounded(.down)) + 978_307_200
        var days = whole / 86_400
        var secondOfDay = whole % 86_400
        if secondOfDay < 0 { secondOfDay += 86_400; days -= 1 }
        // Civil date from days since 1970-01-01 (Gregorian, era-based).
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let hour = secondOfDay / 3600
        let minute = secondOfDay / 60 % 60
        let second = secondOfDay % 60

        reserve(22)
        var out = base + count
        @inline(__always) func two(_ value: Int64) {
            out[0] = UInt8(truncatingIfNeeded: value / 10) &+ 0x30
            out[1] = UInt8(truncatingIfNeeded: value % 10) &+ 0x30
            out += 2
        }
        out[0] = UInt8(ascii: "\""); out += 1
        two(year / 100); two(year % 100)
        out[0] = UInt8(ascii: "-"); out += 1
        two(month)
        out[0] = UInt8(ascii: "-"); out += 1
        two(day)
        out[0] = UInt8(ascii: "T"); out += 1
        two(hour)
        out[0] = UInt8(ascii: ":"); out += 1
        two(minute)
        out[0] = UInt8(ascii: ":"); out += 1
        two(second)
        out[0] = UInt8(ascii: "Z"); out[1] = UInt8(ascii: "\""); out += 2
        count = out - base
    }
}
