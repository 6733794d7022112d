import FolioTestSupport
import Foundation
import FolioStorage
import Testing

@Suite("Key encoding: String")
struct KeyStringTests {
    /// Hand-picked strings: empty, NUL and control characters around a shared prefix, long
    /// strings, combining marks, precomposed letters, emoji, the highest scalars, and the
    /// Tibetan vowel signs the standard library normalises unusually.
    static let edgeStrings: [String] = [
        "", "\0", "\0\0", "\0\u{1}", "\u{1}", "\u{7F}", "a", "a\0", "a\0\0", "a\0b", "a\u{1}", "a\u{1}b", "ab", "a b",
        "b",
        "A", "Z", "e", "e\u{301}", "\u{E9}", "e\u{301}\u{323}", "e\u{323}\u{301}", "\u{1EB9}\u{301}", "f", "\u{FB01}",
        "fi",
        "\u{C5}", "A\u{30A}", "\u{212B}", "\u{3A9}", "\u{2126}", "\u{1100}\u{1161}", "\u{AC00}", "\u{AC00}\u{11A8}",
        "\u{AC01}",
        "\u{F71}", "\u{F73}", "\u{F71}\u{F72}", "\u{345}\u{F73}", "\u{345}\u{F71}\u{F72}", "\u{F71}\u{F72}\u{345}",
        "\u{F73}\u{F73}", "\u{F71}\u{F71}\u{F72}\u{F72}", "\u{1611E}\u{1611E}", "\u{16121}", "\u{16D67}\u{16D67}",
        "\u{16D68}",
        "😀", "😀\0", "👍", "👍🏽", "👨\u{200D}👩\u{200D}👧", "\u{E000}", "\u{FFFD}", "\u{FFFF}", "\u{10000}", "\u{10FFFF}",
        String(repeating: "x", count: 1000), String(repeating: "x", count: 1000) + "\0",
        String(repeating: "x", count: 999) + "y",
        String(repeating: "é", count: 300), String(repeating: "e\u{301}", count: 300) + "\0",
    ]

    /// Counts of the pairs where Swift's `<` on the strings as written disagrees with the keys.
    private struct Deviations {
        /// One string's UTF-8 is a proper prefix of the other's (Swift's first shortcut).
        var rawPrefix = 0
        /// One normal form is a proper prefix of the other's (Swift's second shortcut).
        var normalizedPrefix = 0
    }

    /// Checks one pair: keys order as the normal forms do, keys are equal exactly when Swift's
    /// `==` is true, and wherever Swift's `<` disagrees with the keys, one of its two documented
    /// shortcuts explains it.
    private func checkStrings(_ a: String, _ b: String, _ log: inout KeyPropertyLog, _ deviations: inout Deviations) {
        let expected = normalizedOrder(a, b)
        log.checkPair(a, b, expected: expected)
        log.check(
            (a == b) == (key(a) == key(b)),
            "Swift says \(a.debugDescription) == \(b.debugDescription) is \(a == b); keys say \(key(a) == key(b))")
        // Sanity of the oracle: Swift's `==` compares exactly these normal forms.
        log.check(
            (a == b) == (expected == 0),
            "Swift's == on \(a.debugDescription), \(b.debugDescription) is not normal-form equality")
        let swift = a < b ? -1 : (a == b ? 0 : 1)
        if swift != expected {
            if isProperPrefixPair(Array(a.utf8), Array(b.utf8)) {
                deviations.rawPrefix += 1
            } else if isProperPrefixPair(normalizedUTF8(a), normalizedUTF8(b)) {
                deviations.normalizedPrefix += 1
            } else {
                log.check(
                    false,
                    "Swift orders \(a.debugDescription), \(b.debugDescription) as \(swift), keys as \(expected), "
                        + "and neither documented shortcut applies")
            }
        }
    }

    @Test(
        "Edge strings (empty, NUL, control characters, long, combining marks, emoji) sort as Swift orders them (all pairs)"
    )
    func edgeValues() {
        var log = KeyPropertyLog()
        var deviations = Deviations()
        for a in Self.edgeStrings {
            for b in Self.edgeStrings {
                checkStrings(a, b, &log, &deviations)
            }
        }
        log.expectNoFailures()
        // Spelled out: NUL sorts below every other character but above the end of the string.
        #expect(KeyBytes.compare(key("a"), key("a\0")) < 0)
        #expect(KeyBytes.compare(key("a\0"), key("a\0b")) < 0)
        #expect(KeyBytes.compare(key("a\0b"), key("a\u{1}")) < 0)
        #expect(KeyBytes.compare(key(""), key("\0")) < 0)
        #expect(KeyBytes.compare(key("Z"), key("a")) < 0)  // code point order, not locale order
        #expect(KeyBytes.compare(key("\u{FFFF}"), key("\u{10000}")) < 0)  // UTF-8 order is scalar order (unlike UTF-16)
    }

    @Test("Canonically equivalent spellings (which Swift calls ==) share one key; compatibility equivalents do not")
    func canonicalEquivalence() {
        let equivalent: [(String, String)] = [
            ("e\u{301}", "\u{E9}"), ("\u{212B}", "\u{C5}"), ("A\u{30A}", "\u{C5}"), ("\u{2126}", "\u{3A9}"),
            ("q\u{307}\u{323}", "q\u{323}\u{307}"), ("\u{1100}\u{1161}\u{11A8}", "\u{AC01}"),
            ("\u{F73}", "\u{F71}\u{F72}"),
            ("\u{345}\u{300}", "\u{300}\u{345}"), ("café", "cafe\u{301}"),
            // Unicode 16 compositions: the standard library composes these, Linux Foundation (older Unicode data)
            // does not. Keys follow the standard library, because `==` does.
            ("\u{1611E}\u{1611E}", "\u{16121}"), ("\u{16D67}\u{16D67}", "\u{16D68}"),
            ("\u{113C2}\u{113C2}", "\u{113C5}"),
        ]
        for (a, b) in equivalent {
            #expect(a == b, "Swift no longer treats \(a.debugDescription) and \(b.debugDescription) as equal")
            #expect(
                key(a) == key(b), "\(a.debugDescription) [\(hex(key(a)))] vs \(b.debugDescription) [\(hex(key(b)))]")
        }
        let distinct: [(String, String)] = [
            ("\u{FB01}", "fi"), ("\u{2160}", "I"), ("K", "k"), ("\u{1E9B}", "\u{17F}\u{307}\u{301}"),
        ]
        for (a, b) in distinct {
            #expect((a == b) == (key(a) == key(b)), "\(a.debugDescription) vs \(b.debugDescription)")
        }
    }

    @Test(
        "Keys follow Swift's == and decode to an equal string where the standard library's normaliser departs from UAX #15"
    )
    func tibetanVowelSignQuirk() throws {
        // U+0F73, U+0F75 and U+0F81 have combining class 0 but decompose into marks. The standard
        // library starts a normalisation segment at them, so marks before them are not reordered
        // with their decomposition: "\u{345}\u{F73}" normalises to U+0345 U+0F71 U+0F72 (UAX #15:
        // U+0F71 U+0F72 U+0345), and Swift says it differs from "\u{345}\u{F71}\u{F72}".
        let pairs: [(String, String)] = [
            ("\u{345}\u{F73}", "\u{345}\u{F71}\u{F72}"), ("\u{F73}\u{F73}", "\u{F71}\u{F71}\u{F72}\u{F72}"),
            ("a\u{345}\u{F75}", "a\u{F71}\u{F74}\u{345}"), ("\u{301}\u{F81}\u{315}", "\u{F71}\u{F80}\u{301}\u{315}"),
        ]
        for (a, b) in pairs {
            #expect((a == b) == (key(a) == key(b)), "\(a.debugDescription) vs \(b.debugDescription)")
            for string in [a, b, "e\(a)\u{301}", "\(a)\(b)"] {
                let decoded = try decodeWhole(String.self, key(string))
                #expect(decoded == string, "\(string.debugDescription) decoded as \(decoded.debugDescription)")
                #expect(key(decoded) == key(string))
            }
        }
        // The table of such scalars matches the standard library's data: every mark of class 0
        // whose normal form starts with a combining mark. (Combining marks exist only in planes 0,
        // 1 and 14; the other planes hold ideographs, private use and unassigned code points.)
        var found: [UInt32] = []
        for value in Array(UInt32(0)...0x1FFFF) + Array(UInt32(0xE0000)...0xEFFFF) {
            guard let scalar = Unicode.Scalar(value), scalar.properties.canonicalCombiningClass.rawValue == 0,
                scalar.properties.generalCategory == .nonspacingMark
                    || scalar.properties.generalCategory == .spacingMark,
                let first = String(decoding: String(Character(scalar))._nfcCodeUnits, as: UTF8.self).unicodeScalars
                    .first,
                first.properties.canonicalCombiningClass.rawValue != 0
            else { continue }
            found.append(value)
        }
        // This list is `KeyTextNormalization.misclassifiedStarters`; a new Unicode version that
        // adds to it must be added there too (and to Docs/Keys.md).
        #expect(found == [0x0F73, 0x0F75, 0x0F81])
    }

    @Test(
        "Every scalar below U+0300 is a starter the normaliser leaves alone, alone and in 30,000 random sequences (the encoder's Latin fast path)"
    )
    func latinFastPath() {
        var log = KeyPropertyLog()
        var scalars: [Unicode.Scalar] = []
        for value in UInt32(0)..<0x300 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            scalars.append(scalar)
            let string = String(Character(scalar))
            log.check(
                scalar.properties.canonicalCombiningClass.rawValue == 0 && normalizedUTF8(string) == Array(string.utf8),
                "U+\(String(value, radix: 16)) is not a normalisation-stable starter")
        }
        var rng = SplitMix64(seed: 0x300)
        for _ in 0..<30_000 {
            var view = String.UnicodeScalarView()
            for _ in 0..<(1 + rng.index(8)) { view.append(rng.pick(scalars)) }
            let string = String(view)
            let utf8 = Array(string.utf8)
            log.check(normalizedUTF8(string) == utf8, "\(string.debugDescription) changes under normalisation")
            // The key is the raw bytes, escaped: the same as what the slow path would write.
            var expected: [UInt8] = []
            for byte in utf8 { expected += byte == 0 ? [0x00, 0xFF] : [byte] }
            log.check(key(string) == expected + [0x00, 0x01], "\(string.debugDescription) has an unexpected key")
        }
        log.expectNoFailures()
    }

    @Test(
        "60,000 random Unicode pairs: keys sort as the normal forms do, equal exactly when Swift's == is true, and Swift's < deviates only by its two shortcuts"
    )
    func randomPairs() {
        var rng = SplitMix64(seed: 0x5712_1696)
        var log = KeyPropertyLog()
        var deviations = Deviations()
        for _ in 0..<60_000 {
            let a = rng.interestingString()
            if rng.chance(1, in: 10) {
                // A long (decomposed) spelling against a short (composed) spelling of the same
                // text plus one more scalar: the shape where Swift's second shortcut misorders.
                let composed = String(decoding: normalizedUTF8(a), as: UTF8.self)
                checkStrings(
                    a.decomposedStringWithCanonicalMapping, composed + String(rng.interestingScalar()), &log,
                    &deviations)
                continue
            }
            let b = rng.chance(1, in: 2) ? rng.relatedString(a) : rng.interestingString()
            checkStrings(a, b, &log, &deviations)
        }
        log.expectNoFailures()
        // The generator is built to reach both shortcuts; if it stops reaching them the
        // characterisation above is no longer being tested.
        #expect(deviations.rawPrefix > 0 && deviations.normalizedPrefix > 0, "\(deviations)")
    }

    @Test("Swift's String < is not a total order on some non-NFC strings; keys give the normal-form order")
    func swiftShortcutCases() {
        // Shortcut 1: a string whose raw UTF-8 is a prefix of another's is "less", even when the
        // longer string's extra combining mark reorders into the shared part. On this toolchain
        // Swift says "\u{345}" < "\u{345}\u{300}", and "\u{345}\u{300}" == "\u{300}\u{345}", and
        // "\u{300}\u{345}" < "\u{345}": a cycle, so no byte order can reproduce it.
        let x = "\u{345}", y = "\u{345}\u{300}", z = "\u{300}\u{345}"
        #expect(y == z)
        #expect(key(y) == key(z))
        #expect(KeyBytes.compare(key(z), key(x)) < 0)  // U+0300 < U+0345 after reordering
        #expect(KeyBytes.compare(key(y), key(x)) < 0)
        // Shortcut 2: when one normal form is a proper prefix of the other, Swift decides by the
        // raw UTF-8 lengths. U+0F71 and U+0F73 are both 3 bytes, so Swift finds neither < the
        // other nor ==. The normal form of U+0F73 is U+0F71 U+0F72, which extends U+0F71, so its
        // key sorts after.
        #expect(KeyBytes.compare(key("\u{F71}"), key("\u{F73}")) < 0)
        #expect(key("\u{F73}") == key("\u{F71}\u{F72}"))
    }

    @Test(
        "Round trip: 20,000 random strings decode to a string Swift calls equal, with the same key (the NFC bytes when normalisation is idempotent)"
    )
    func roundTrip() {
        var rng = SplitMix64(seed: 5)
        var log = KeyPropertyLog()
        for string in Self.edgeStrings + (0..<20_000).map({ _ in rng.interestingString(maxScalars: 12) }) {
            let normalized = normalizedUTF8(string)
            let idempotent = normalizedUTF8(String(decoding: normalized, as: UTF8.self)) == normalized
            log.checkRoundTrip(string) { decoded in
                decoded == string && key(decoded) == key(string) && (!idempotent || Array(decoded.utf8) == normalized)
            }
        }
        log.expectNoFailures()
    }

    @Test("Decoding rejects invalid UTF-8, non-normalised bytes, bad escapes and a missing terminator")
    func rejectsMalformed() {
        #expect(throws: StorageError.self) { try decodeWhole(String.self, [0xC3, 0x00, 0x01]) }  // truncated sequence
        // surrogate
        #expect(throws: StorageError.self) { try decodeWhole(String.self, [0xED, 0xA0, 0x80, 0x00, 0x01]) }
        #expect(throws: StorageError.self) { try decodeWhole(String.self, [0xC0, 0x80, 0x00, 0x01]) }  // overlong NUL
        // e + U+0301, not NFC
        #expect(throws: StorageError.self) { try decodeWhole(String.self, [0x65, 0xCC, 0x81, 0x00, 0x01]) }
        #expect(throws: StorageError.self) { try decodeWhole(String.self, [0x61, 0x00, 0x02]) }  // bad escape
        #expect(throws: StorageError.self) { try decodeWhole(String.self, [0x61, 0x00]) }  // cut escape
        #expect(throws: StorageError.self) { try decodeWhole(String.self, [0x61, 0x62]) }  // no terminator
        #expect(throws: StorageError.self) { try decodeWhole(String.self, []) }
    }
}
