#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Unicode normalisation for string keys: the normal form that Swift's own `String` equality uses.
///
/// Swift's `==` on strings is canonical equivalence ("e\u{301}" == "\u{E9}"), so the key of a
/// string must be the same for every spelling Swift considers equal. The key therefore holds the
/// bytes the standard library itself compares: `String._withNFCCodeUnits`, the routine that
/// `String`'s `==`, `<` and `hash(into:)` are built on. Two facts make any other normaliser wrong:
///
/// - **Unicode version.** On Swift 6.3 the standard library implements Unicode 16, while Linux
///   Foundation's `precomposedStringWithCanonicalMapping` uses older data. For characters new in
///   Unicode 16 they disagree: the standard library composes U+1611E U+1611E into U+16121 (so
///   Swift says the two spellings are `==`), Foundation leaves the pair alone.
/// - **A segmentation quirk.** The standard library's decomposition starts a new segment at every
///   scalar of canonical combining class 0. Three such scalars, U+0F73, U+0F75 and U+0F81
///   (Tibetan vowel signs), decompose into combining marks (U+0F71 plus U+0F72, U+0F74 or U+0F80),
///   and those marks are not reordered with marks *before* the vowel sign. So "\u{345}\u{F73}"
///   normalises to U+0345 U+0F71 U+0F72, not to U+0F71 U+0F72 U+0345 as UAX #15 specifies, and
///   Swift says "\u{345}\u{F73}" != "\u{345}\u{F71}\u{F72}" (their hashes differ too). The key
///   follows Swift, so these two strings get different keys, as they must for a store whose
///   callers use `Set<String>` and `Dictionary<String, _>` semantics.
///
/// The quirk has a consequence for decoding: the standard library's normal form is not
/// idempotent, since normalising U+0345 U+0F71 U+0F72 again reorders it. Returning the key's bytes
/// as a `String` would give a string Swift does not consider equal to the one encoded (and whose
/// key differs). ``restoringMisclassifiedStarters(_:)`` rebuilds an equal string instead.
/// See `Docs/Keys.md`, "Strings".
enum KeyTextNormalization {
    /// True if every byte is below 0x80. ASCII text is already in normal form (no ASCII character
    /// decomposes or combines), which lets the common case skip normalisation entirely.
    static func isASCII(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = utf8.count
        if let base = utf8.baseAddress {
            let raw = UnsafeRawPointer(base)
            while index + 8 <= count {
                if raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 {
                    return false
                }
                index += 8
            }
        }
        while index < count {
            if utf8[index] >= 0x80 {
                return false
            }
            index += 1
        }
        return true
    }

    /// True if every byte is below 0xCC, that is, if the UTF-8 text (assumed valid) has only
    /// scalars below U+0300: ASCII, Latin-1, Latin Extended-A and -B, IPA and spacing modifier
    /// letters. Every such scalar is a starter that is its own NFC form (a precomposed letter
    /// such as U+00E9 decomposes, but NFC recomposes it) and that never combines with a neighbour,
    /// so such text is already normalised. (The standard library's own normaliser uses the same
    /// "below U+0300" fast path.) A test checks the claim against its tables.
    static func isBelowCombiningMarks(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in utf8 where byte >= 0xCC {
            return false
        }
        return true
    }

    /// Calls `body` with each UTF-8 byte of `string` in the standard library's normal form, in order.
    static func forEachNormalizedByte(of string: String, _ body: (UInt8) -> Void) {
        string._withNFCCodeUnits(body)
    }

    /// True if the standard library's normal form of `string` is exactly the bytes `utf8`.
    static func normalizes(_ string: String, to utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        var matches = true
        string._withNFCCodeUnits { byte in
            if matches {
                if index < utf8.count && utf8[index] == byte {
                    index += 1
                } else {
                    matches = false
                }
            }
        }
        return matches && index == utf8.count
    }

    /// The string whose UTF-8 encoding is exactly `utf8`, or nil if `utf8` is not valid UTF-8.
    ///
    /// `String(decoding:as:)` replaces each invalid sequence with U+FFFD, so the bytes come
    /// through unchanged exactly when they were valid (U+FFFD itself encodes to the same bytes
    /// either way). This is the standard library's fastest validating path, specialised for UTF-8.
    static func string(validatingUTF8 utf8: UnsafeBufferPointer<UInt8>) -> String? {
        var string = String(decoding: utf8, as: UTF8.self)
        let unchanged = string.withUTF8 { decoded -> Bool in
            guard decoded.count == utf8.count else {
                return false
            }
            guard let left = decoded.baseAddress, let right = utf8.baseAddress else {
                return decoded.isEmpty
            }
            return memcmp(left, right, utf8.count) == 0
        }
        return unchanged ? string : nil
    }

    /// The scalars of combining class 0 whose canonical decomposition starts with a combining
    /// mark, with that decomposition (Unicode 16). A test derives the list from the standard
    /// library's tables and fails if a future Unicode version adds to it.
    static let misclassifiedStarters: [(starter: Unicode.Scalar, first: Unicode.Scalar, second: Unicode.Scalar)] = [
        ("\u{0F73}", "\u{0F71}", "\u{0F72}"),
        ("\u{0F75}", "\u{0F71}", "\u{0F74}"),
        ("\u{0F81}", "\u{0F71}", "\u{0F80}"),
    ]

    /// A string whose normal form is `normalized`, for a `normalized` that is not its own normal
    /// form; nil if none is found this way.
    ///
    /// The standard library emits marks out of canonical order (a combining class that drops
    /// without an intervening starter) only where a segment began at a misclassified starter:
    /// the marks before it were sorted and emitted, then the starter's decomposition and the marks
    /// after it were sorted separately. So every run that starts at such a drop and continues
    /// while the class is non-decreasing (and non-zero) is a sorted segment that began with a
    /// misclassified starter; it contains the starter's decomposition, whose two marks are the
    /// first of their combining classes in the run (a stable sort keeps the starter's marks
    /// ahead of later marks of the same class). Replacing those two marks with the starter, placed
    /// at the front of the run, rebuilds a string that normalises to `normalized`. The caller
    /// verifies the result by normalising it again.
    static func restoringMisclassifiedStarters(_ normalized: String) -> String? {
        let scalars = Array(normalized.unicodeScalars)
        var result = String.UnicodeScalarView()
        var restoredAny = false
        var previousClass: UInt8 = 0
        var index = 0
        while index < scalars.count {
            let currentClass = combiningClass(scalars[index])
            guard currentClass != 0 && currentClass < previousClass else {
                result.append(scalars[index])
                previousClass = currentClass
                index += 1
                continue
            }
            var end = index + 1
            var lastClass = currentClass
            while end < scalars.count {
                let nextClass = combiningClass(scalars[end])
                if nextClass == 0 || nextClass < lastClass {
                    break
                }
                lastClass = nextClass
                end += 1
            }
            var run = Array(scalars[index..<end])
            guard let starter = removeDecomposition(from: &run) else {
                return nil
            }
            result.append(starter)
            result.append(contentsOf: run)
            restoredAny = true
            previousClass = lastClass
            index = end
        }
        return restoredAny ? String(result) : nil
    }

    /// Removes a misclassified starter's decomposition from a sorted run of marks and returns the
    /// starter, or returns nil if the run holds no such decomposition.
    private static func removeDecomposition(from run: inout [Unicode.Scalar]) -> Unicode.Scalar? {
        for entry in misclassifiedStarters {
            let firstClass = combiningClass(entry.first)
            let secondClass = combiningClass(entry.second)
            guard let firstIndex = run.firstIndex(where: { combiningClass($0) == firstClass }),
                run[firstIndex] == entry.first,
                let secondIndex = run.firstIndex(where: { combiningClass($0) == secondClass }),
                run[secondIndex] == entry.second
            else {
                continue
            }
            run.remove(at: max(firstIndex, secondIndex))
            run.remove(at: min(firstIndex, secondIndex))
            return entry.starter
        }
        return nil
    }

    /// The canonical combining class of `scalar` (0 for starters).
    private static func combiningClass(_ scalar: Unicode.Scalar) -> UInt8 {
        scalar.properties.canonicalCombiningClass.rawValue
    }
}
