import Foundation

// Number tokens: their extent, Foundation-compatible syntax checks, exact integer reads, and
// the powers of ten of the fast float conversion. Turning tokens into Swift values is
// DecoderState+Numbers.swift.

extension JSONInput {
    /// The end of the number token at `start` (Foundation's scanner's lax token:
    /// digits, `.`, `+`, `-`, `e`, `E`).
    @inline(__always)
    func numberEnd(_ start: Int) -> Int {
        var i = start + 1
        while i < count, JSONInput.isNumberByte(base[i]) { i += 1 }
        return i
    }

    /// The token as a string (for the slow parsers).
    func tokenString(_ start: Int, _ end: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: base + start, count: end - start), as: UTF8.self)
    }

    /// Whether `start..<end` is a number in JSON's grammar.
    func isValidNumber(_ start: Int, _ end: Int) -> Bool {
        var i = start
        if i < end, base[i] == ASCII.minus { i += 1 }
        guard i < end else { return false }
        if base[i] == ASCII.zero {
            i += 1
        } else if base[i] > ASCII.zero && base[i] <= ASCII.nine {
            while i < end, base[i] >= ASCII.zero && base[i] <= ASCII.nine { i += 1 }
        } else {
            return false
        }
        if i < end, base[i] == ASCII.dot {
            i += 1
            let digits = i
            while i < end, base[i] >= ASCII.zero && base[i] <= ASCII.nine { i += 1 }
            guard i > digits else { return false }
        }
        if i < end, base[i] == ASCII.lowerE || base[i] == ASCII.upperE {
            i += 1
            if i < end, base[i] == ASCII.plus || base[i] == ASCII.minus { i += 1 }
            let digits = i
            while i < end, base[i] >= ASCII.zero && base[i] <= ASCII.nine { i += 1 }
            guard i > digits else { return false }
        }
        return i == end
    }

    /// Whether a number that parsed to zero is a true zero, by Foundation's test (which
    /// rejects non-zero numbers that round to zero): bytes in groups of four from the
    /// front, then the last few from the back; a non-zero digit says no, an exponent
    /// mark says yes. Kept exactly, quirk included ("0e5" is not a true zero there).
    func isTrueZero(_ start: Int, _ end: Int) -> Bool {
        @inline(__always) func check(_ i: Int) -> Bool? {
            let c = base[i]
            if c > ASCII.zero && c <= ASCII.nine { return false }
            if c == ASCII.lowerE || c == ASCII.upperE { return true }
            return nil
        }
        var i = start
        while end - i >= 4 {
            for k in 0..<4 { if let answer = check(i + k) { return answer } }
            i += 4
        }
        var k = end - 1
        while k >= i {
            if let answer = check(k) { return answer }
            k -= 1
        }
        return true
    }

    /// A plain integer token (`-?(0|[1-9][0-9]*)`) read into `T`, or `nil` if the token
    /// is not plain or overflows `T`.
    @inline(__always)
    func plainInteger<T: FixedWidthInteger>(_ start: Int, _ end: Int, as: T.Type) -> T? {
        var i = start
        let negative = base[i] == ASCII.minus
        if negative { i += 1 }
        guard i < end else { return nil }
        if base[i] == ASCII.zero {
            return i + 1 == end ? 0 : nil
        }
        var value: T = 0
        if negative {
            while i < end {
                let d = base[i] &- ASCII.zero
                guard d <= 9 else { return nil }
                let (m, o1) = value.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.subtractingReportingOverflow(T(d))
                guard !o1, !o2 else { return nil }
                value = s
                i += 1
            }
        } else {
            while i < end {
                let d = base[i] &- ASCII.zero
                guard d <= 9 else { return nil }
                let (m, o1) = value.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.addingReportingOverflow(T(d))
                guard !o1, !o2 else { return nil }
                value = s
                i += 1
            }
        }
        return value
    }
}

extension JSONInput {
    #if arch(x86_64) && !os(Windows) && !os(Android)
    /// 10^0 ... 10^27, each exact in a Float80 (5^27 < 2^64).
    static let widePowers: [Float80] = {
        var powers: [Float80] = [1]
        for _ in 1...27 { powers.append(powers.last! * 10) }
        return powers
    }()
    #endif

    static let powers: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]
}
