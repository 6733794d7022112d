import FolioTestSupport
import Foundation

/// Random values for key property tests, biased towards the values where encodings break:
/// boundaries, signs, zero bytes, shared prefixes, combining marks.
extension SplitMix64 {
    /// An Int64 from a mix of distributions: uniform, small, near the extremes, near powers of two.
    mutating func interestingInt64() -> Int64 {
        switch index(5) {
        case 0: return Int64(bitPattern: next())
        case 1: return Int64(index(41)) - 20
        case 2: return Int64.min + Int64(index(5))
        case 3: return Int64.max - Int64(index(5))
        default:
            let power = Int64(1) << Int64(index(63))
            return (chance(1, in: 2) ? power : -power) + Int64(index(3)) - 1
        }
    }

    /// A UInt64 from a mix of distributions.
    mutating func interestingUInt64() -> UInt64 {
        switch index(4) {
        case 0: return next()
        case 1: return UInt64(index(20))
        case 2: return UInt64.max - UInt64(index(5))
        default: return (UInt64(1) << UInt64(index(64))) &+ UInt64(index(3)) &- 1
        }
    }

    /// A Double from a mix of distributions: any bit pattern (NaNs, subnormals, infinities),
    /// explicit NaNs of every sign and payload, zeros of both signs, ordinary numbers.
    mutating func interestingDouble() -> Double {
        switch index(7) {
        case 0: return Double(bitPattern: next())
        case 1:
            // A NaN: exponent all ones, non-zero fraction, random sign, quiet or signalling.
            let fraction = (next() & 0x000F_FFFF_FFFF_FFFF) | 1
            let sign: UInt64 = chance(1, in: 2) ? 0x8000_0000_0000_0000 : 0
            return Double(bitPattern: sign | 0x7FF0_0000_0000_0000 | fraction)
        case 2: return pick(Self.specialDoubles)
        case 3: return Double(Int(index(21)) - 10)
        case 4: return Double.random(in: -1e6...1e6, using: &self)
        case 5: return Double(bitPattern: next() & 0x800F_FFFF_FFFF_FFFF)  // subnormals (and zeros)
        default: return Double.random(in: -1...1, using: &self) * pow(10, Double(index(600)) - 300)
        }
    }

    static let specialDoubles: [Double] = [
        0.0, -0.0, .infinity, -.infinity, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude, -.leastNormalMagnitude,
    ]

    static let specialBytes: [UInt8] = [0x00, 0x01, 0x02, 0x7F, 0x80, 0xFE, 0xFF]

    /// A byte, biased towards the bytes the escaping treats specially.
    mutating func interestingByte() -> UInt8 {
        let random = next()
        return random & 1 == 0 ? Self.specialBytes[Int((random >> 8) % 7)] : UInt8(truncatingIfNeeded: random >> 32)
    }

    /// A short byte string, biased towards zero bytes and the bytes around the escapes.
    mutating func interestingBytes(maxLength: Int = 10) -> [UInt8] {
        let count = index(maxLength + 1)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        for _ in 0..<count {
            bytes.append(interestingByte())
        }
        return bytes
    }

    /// `bytes` changed a little: a byte replaced, a byte appended, truncated, or unchanged, so
    /// that pairs often share long prefixes or are equal.
    mutating func relatedBytes(_ bytes: [UInt8]) -> [UInt8] {
        var result = bytes
        switch index(5) {
        case 0: return result
        case 1 where !result.isEmpty: result[index(result.count)] = interestingByte()
        case 2: result.append(interestingByte())
        case 3 where !result.isEmpty: result.removeLast(1 + index(result.count))
        default: result.insert(interestingByte(), at: index(result.count + 1))
        }
        return result
    }

    /// Scalars that stress normalisation and ordering: NUL and control bytes, ASCII, Latin-1,
    /// combining marks of several combining classes (which reorder), precomposed letters,
    /// singletons (Angstrom and Ohm signs), composition exclusions (U+0F73, U+2ADC, U+1D15E),
    /// Hangul jamo and syllables, Unicode 16 characters with canonical compositions (Gurung Khema,
    /// Kirat Rai, Tulu-Tigalari), emoji with modifiers and joiners, private use, U+FFFF, U+10FFFF.
    static let interestingScalars: [UInt32] = [
        0x00, 0x01, 0x09, 0x41, 0x61, 0x62, 0x65, 0x71, 0x7F, 0x80, 0xC5, 0xE9, 0xFF,
        0x0300, 0x0301, 0x0307, 0x0308, 0x030A, 0x0323, 0x0327, 0x0345, 0x05B0, 0x05B7, 0x0591,
        0x0E38, 0x0E48, 0x0F71, 0x0F72, 0x0F73, 0x0F74, 0x0F75, 0x0F80, 0x0F81, 0x212B, 0x2126, 0x03A9, 0x1E9B, 0x2ADC,
        0x1D15E, 0x1D165, 0x1D16E, 0x1100, 0x1161, 0x11A8, 0xAC00, 0xAC01, 0x304B, 0x304C, 0x3099,
        0x11099, 0x1109A, 0x110BA, 0x1611E, 0x1611F, 0x16120, 0x16121, 0x16122, 0x16129, 0x16D67,
        0x16D68, 0x113B8, 0x113C2, 0x113C5, 0x1F600, 0x1F44D, 0x1F3FD, 0x200D, 0xFE0F, 0xE000,
        0xFFFD, 0xFFFF, 0x10FFFF,
    ]

    /// A random Unicode scalar: from the interesting pool, the BMP, or anywhere.
    mutating func interestingScalar() -> Unicode.Scalar {
        while true {
            let value: UInt32
            switch index(6) {
            case 0, 1, 2: value = pick(Self.interestingScalars)
            case 3: value = UInt32(0x20 + index(0x5F))  // printable ASCII
            case 4: value = UInt32(index(0x3000))  // scripts with many combining marks
            default: value = UInt32(index(0x110000))  // anything, including unassigned
            }
            if let scalar = Unicode.Scalar(value) {
                return scalar
            }
        }
    }

    /// Starters and combining marks of many combining classes (1, 10, 129, 130, 132, 216, 220,
    /// 230, 232, 240) including the Tibetan vowel signs U+0F73, U+0F75 and U+0F81, whose
    /// decompositions start with a mark: strings of these stress reordering and composition.
    static let markSoupScalars: [UInt32] = [
        0x61, 0x65, 0x0F40, 0x1100, 0x1161, 0x0300, 0x0301, 0x0315, 0x031B, 0x0323, 0x0334, 0x0344, 0x0345,
        0x05B0, 0x0F71, 0x0F72, 0x0F73, 0x0F74, 0x0F75, 0x0F7A, 0x0F80, 0x0F81, 0x0F82, 0x1611E, 0x16121, 0x16129,
    ]

    /// A random string of up to `maxScalars` scalars: a third pure ASCII, a sixth "mark soup"
    /// (mostly combining marks), the rest drawn from ``interestingScalar()``.
    mutating func interestingString(maxScalars: Int = 6) -> String {
        var scalars = String.UnicodeScalarView()
        let count = index(maxScalars + 1)
        let mode = index(6)
        for _ in 0..<count {
            switch mode {
            case 0, 1: scalars.append(Unicode.Scalar(UInt8(chance(1, in: 8) ? index(3) : 0x20 + index(0x5F))))
            case 2: scalars.append(Unicode.Scalar(pick(Self.markSoupScalars))!)
            default: scalars.append(interestingScalar())
            }
        }
        return String(scalars)
    }

    /// `string` changed in a way that keeps long common prefixes or canonical equivalence: a
    /// scalar appended or replaced, a prefix, the NFD or NFC spelling, or unchanged.
    mutating func relatedString(_ string: String) -> String {
        var scalars = Array(string.unicodeScalars)
        switch index(7) {
        case 0: return string
        case 1: return string.decomposedStringWithCanonicalMapping
        // equal to `string`, except for the U+0F73 quirk
        case 2: return String(decoding: string._nfcCodeUnits, as: UTF8.self)
        case 3: scalars.append(interestingScalar())
        case 4 where !scalars.isEmpty: scalars[index(scalars.count)] = interestingScalar()
        case 5 where !scalars.isEmpty: scalars.removeLast(1 + index(scalars.count))
        default: scalars.insert(interestingScalar(), at: index(scalars.count + 1))
        }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }

    /// A UUID with random bytes, often sharing a prefix with `other`.
    mutating func uuid(near other: UUID? = nil) -> UUID {
        var value: uuid_t = other?.uuid ?? (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let shared = other != nil && chance(1, in: 2) ? index(17) : 0
        withUnsafeMutableBytes(of: &value) { raw in
            for index in shared..<16 {
                raw[index] = interestingByte()
            }
        }
        return UUID(uuid: value)
    }
}

/// The UTF-8 bytes of `string` in the standard library's normal form: what Swift's `==`, `<` and
/// hashing compare, and what a key holds.
func normalizedUTF8(_ string: String) -> [UInt8] {
    string._nfcCodeUnits
}

/// -1, 0 or 1 as the normal forms of two strings compare bytewise (equivalently, by scalars):
/// the order Swift's `<` means to implement, and the order keys must have.
func normalizedOrder(_ a: String, _ b: String) -> Int {
    let left = normalizedUTF8(a), right = normalizedUTF8(b)
    return left == right ? 0 : (left.lexicographicallyPrecedes(right) ? -1 : 1)
}

/// True if `a` is a proper prefix of `b` or `b` of `a`.
func isProperPrefixPair(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    a != b && (a.starts(with: b) || b.starts(with: a))
}
