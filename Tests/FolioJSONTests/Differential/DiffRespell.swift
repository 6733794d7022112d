import Foundation

/// Valid JSON spelled differently from how Foundation's encoder spells it: whitespace between
/// tokens, every character of strings and keys possibly as a `\u` escape (surrogate pairs
/// beyond the BMP, either hex case), short escapes, `\/`, and numbers with redundant
/// fractions and exponents. A decoder must read every spelling as the same value.
enum DiffRespell {
    static func respell(_ json: [UInt8], _ random: inout DiffRandom) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        func whitespace() {
            guard random.chance(1, in: 3) else { return }
            for _ in 0..<(1 + random.below(2)) { out.append(random.pick([0x20, 0x09, 0x0A, 0x0D])) }
        }
        whitespace()
        while i < json.count {
            let b = json[i]
            switch b {
            case UInt8(ascii: "\""):
                i = respellString(json, from: i, into: &out, &random)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                var end = i
                while end < json.count, "0123456789+-.eE".utf8.contains(json[end]) { end += 1 }
                out += respellNumber(Array(json[i..<end]), &random)
                i = end
            case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "}"),
                UInt8(ascii: "]"):
                whitespace()
                out.append(b)
                whitespace()
                i += 1
            default:
                out.append(b)
                i += 1
            }
        }
        whitespace()
        return out
    }

    /// Reads the string starting at `start` (a quote), writes it respelled, returns the index after it.
    static func respellString(
        _ json: [UInt8], from start: Int, into out: inout [UInt8], _ random: inout DiffRandom
    ) -> Int {
        var scalars: [UInt32] = []
        var i = start + 1
        func hex(_ at: Int) -> UInt32 { UInt32(String(decoding: json[at..<at + 4], as: UTF8.self), radix: 16) ?? 0 }
        while i < json.count, json[i] != UInt8(ascii: "\"") {
            if json[i] == UInt8(ascii: "\\") {
                let e = json[i + 1]
                switch e {
                case UInt8(ascii: "u"):
                    var v = hex(i + 2)
                    i += 6
                    if (0xD800..<0xDC00).contains(v), i + 6 <= json.count, json[i] == UInt8(ascii: "\\"),
                        json[i + 1] == UInt8(ascii: "u")
                    {
                        let low = hex(i + 2)
                        v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    }
                    scalars.append(v)
                    continue
                case UInt8(ascii: "b"): scalars.append(8)
                case UInt8(ascii: "f"): scalars.append(12)
                case UInt8(ascii: "n"): scalars.append(10)
                case UInt8(ascii: "r"): scalars.append(13)
                case UInt8(ascii: "t"): scalars.append(9)
                default: scalars.append(UInt32(e))
                }
                i += 2
            } else {
                // One UTF-8 sequence.
                var length = 1
                if json[i] >= 0xF0 {
                    length = 4
                } else if json[i] >= 0xE0 {
                    length = 3
                } else if json[i] >= 0xC0 {
                    length = 2
                }
                let s = String(decoding: json[i..<min(json.count, i + length)], as: UTF8.self)
                scalars += s.unicodeScalars.map(\.value)
                i += length
            }
        }
        out.append(UInt8(ascii: "\""))
        for v in scalars { out += spell(v, &random) }
        out.append(UInt8(ascii: "\""))
        return i + 1
    }

    static func uEscape(_ v: UInt32, _ upper: Bool) -> [UInt8] {
        var digits = String(v, radix: 16, uppercase: upper)
        digits = String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        return Array("\\u\(digits)".utf8)
    }

    static func spell(_ v: UInt32, _ random: inout DiffRandom) -> [UInt8] {
        let upper = random.chance(1, in: 2)
        let short: [UInt32: String] = [
            8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 0x22: "\\\"", 0x5C: "\\\\", 0x2F: "\\/",
        ]
        if let s = short[v], random.chance(1, in: 2) || v == 0x22 || v == 0x5C || v < 0x20 {
            return random.chance(2, in: 3) ? Array(s.utf8) : uEscape(v, upper)
        }
        if v < 0x20 { return uEscape(v, upper) }
        guard random.chance(1, in: 4) else { return Array(String(Unicode.Scalar(v).map(Character.init) ?? "?").utf8) }
        if v > 0xFFFF {
            let u = v - 0x10000
            return uEscape(0xD800 + (u >> 10), upper) + uEscape(0xDC00 + (u & 0x3FF), random.chance(1, in: 2))
        }
        return uEscape(v, upper)
    }

    static func respellNumber(_ number: [UInt8], _ random: inout DiffRandom) -> [UInt8] {
        var n = number
        let hasExponent = n.contains(UInt8(ascii: "e")) || n.contains(UInt8(ascii: "E"))
        let hasFraction = n.contains(UInt8(ascii: "."))
        if hasExponent {
            // Switch the exponent letter's case, or give a bare exponent a plus sign.
            if let e = n.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
                if random.chance(1, in: 2) { n[e] = n[e] == UInt8(ascii: "e") ? UInt8(ascii: "E") : UInt8(ascii: "e") }
                if e + 1 < n.count, n[e + 1] != UInt8(ascii: "+"), n[e + 1] != UInt8(ascii: "-"),
                    random.chance(1, in: 2)
                {
                    n.insert(UInt8(ascii: "+"), at: e + 1)
                }
            }
            return n
        }
        switch random.below(12) {
        case 0: return n + Array((hasFraction ? "0" : ".0").utf8)
        case 1: return n + Array(random.pick(["e0", "E0", "e+0", "e-0", "E+00"]).utf8)
        case 2 where !hasFraction && n != Array("0".utf8) && n != Array("-0".utf8): return n + Array("0e-1".utf8)
        case 3 where !hasFraction: return n + Array(".000e0".utf8)
        default: return n
        }
    }
}
