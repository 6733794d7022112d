import Foundation

/// `Data` as Base64 and `Date` as ISO 8601 text, byte for byte as Foundation writes them.
extension JSONByteWriter {
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
