import Foundation

/// Hostile variations of JSON documents.
enum DiffMutations {
    static let specialBytes: [UInt8] =
        [0x00, 0x01, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFE, 0xFF]
        + Array(#""\{}[],:-+.eE0123456789 tfn/u"#.utf8)

    static let specialSequences: [[UInt8]] =
        [
            [0xC0, 0x80],  // overlong NUL
            [0xC1, 0xBF],  // overlong
            [0xE0, 0x80, 0xAF],  // overlong "/"
            [0xF0, 0x82, 0x82, 0xAC],  // overlong euro sign
            [0xED, 0xA0, 0x80],  // a surrogate in UTF-8
            [0xED, 0xBF, 0xBF],
            [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
            [0xE2, 0x82],  // truncated sequence
            [0xF0, 0x9F, 0x98],
            [0x80],  // lone continuation
            [0xEF, 0xBB, 0xBF],  // byte order mark
            [0xF0, 0x9F, 0x98, 0x80],  // valid emoji
            [0xCC, 0x81],  // combining acute
        ]
        + [
            #"\ud800"#, #"\udc00"#, #"\ud800\u0041"#, #"\udbff\udfff"#, #"\ud83d\ude00"#, #"\uD83D\uDE00"#,
            #"\ude00\ud83d"#,
            #"\u00"#, #"\uZZZZ"#, #"\u0000"#, #"\x41"#, #"\'"#, #"\/"#, #"\""#, "\\", "1e999", "-1e999", "1e-999", "-",
            "01", "-0", "0.", ".5", "1.e5", "1e",
            "NaN", "Infinity", "-Infinity", "true", "false", "null", "nul", "\t", "\r\n", "//", "/*", "}", "]", "{",
            "[", ",", ":", "\"\"", "18446744073709551616",
            "-9223372036854775809", "9223372036854775808", "1E400", "0x10", "+1", "1_000",
        ].map { Array($0.utf8) }

    static func mutate(_ document: [UInt8], _ random: inout DiffRandom) -> [UInt8] {
        var bytes = document
        for _ in 0..<(1 + random.below(3)) {
            let at = bytes.isEmpty ? 0 : random.below(bytes.count + 1)
            switch random.below(7) {
            case 0 where !bytes.isEmpty:
                bytes[min(at, bytes.count - 1)] = UInt8(truncatingIfNeeded: random.next())
            case 1 where !bytes.isEmpty:
                bytes[min(at, bytes.count - 1)] = random.pick(specialBytes)
            case 2:
                bytes.insert(contentsOf: random.pick(specialSequences), at: at)
            case 3 where !bytes.isEmpty:
                let end = min(bytes.count, at + 1 + random.below(3))
                bytes.removeSubrange(min(at, end)..<end)
            case 4 where !bytes.isEmpty:
                // Replace a byte inside the document with a sequence (into strings, keys, numbers).
                bytes.replaceSubrange(
                    min(at, bytes.count - 1)..<min(at + 1, bytes.count), with: random.pick(specialSequences))
            case 5 where !bytes.isEmpty:
                let start = min(at, bytes.count - 1)
                let end = min(bytes.count, start + 1 + random.below(12))
                bytes.insert(contentsOf: bytes[start..<end], at: random.below(bytes.count + 1))
            default:
                if bytes.count >= 2 { bytes.swapAt(random.below(bytes.count), random.below(bytes.count)) }
            }
        }
        return bytes
    }
}
