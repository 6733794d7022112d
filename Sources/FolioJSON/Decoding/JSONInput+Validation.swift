import Foundation

// The structural validator: one pass over the whole input before any value is decoded.

extension JSONInput {
    /// Checks the whole input's structure as Foundation's scanner does, and returns the
    /// offset of the top-level value. Like Foundation's, it accepts trailing commas in
    /// arrays and objects, a UTF-8 byte order mark, and defers the checks of number
    /// syntax, string escapes, control characters and UTF-8 validity to the moment a
    /// value is decoded. Iterative: nesting costs one bit per level, never stack.
    ///
    /// When the top-level value is an object, its members are recorded in `recorder`'s
    /// member table on the way (so its keyed container needs no second scan).
    func validate(maximumDepth: Int, recorder: DecoderState? = nil) throws -> Int {
        var start = 0
        if count >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF { start = 3 }
        var i = skipWhitespace(start)
        let top = i
        guard i < count else { throw invalidJSON() }
        // One flag per open container: true for an object.
        var stack = DepthStack()
        value: while true {
            // A value is expected at i (whitespace skipped).
            guard i < count else { throw invalidJSON() }
            let c = base[i]
            switch c {
            case ASCII.openBrace:
                guard stack.count < maximumDepth else { throw tooDeep(maximumDepth) }
                stack.append(true)
                i = skipWhitespace(i + 1)
                guard i < count else { throw invalidJSON() }
                if base[i] == ASCII.closeBrace {
                    stack.removeLast()
                    i += 1
                } else {
                    if stack.count == 1, let recorder {
                        recorder.beginTopLevelObject(at: top)
                        i = try recordMemberKey(i, recorder)
                    } else {
                        i = try validateMemberKey(i)
                    }
                    continue value
                }
            case ASCII.openBracket:
                guard stack.count < maximumDepth else { throw tooDeep(maximumDepth) }
                stack.append(false)
                i = skipWhitespace(i + 1)
                guard i < count else { throw invalidJSON() }
                if base[i] == ASCII.closeBracket {
                    stack.removeLast()
                    i += 1
                } else {
                    continue value
                }
            case ASCII.quote:
                i = try skipStringValidating(i)
            case ASCII.minus, ASCII.zero...ASCII.nine:
                i += 1
                while i < count, JSONInput.isNumberByte(base[i]) { i += 1 }
            case ASCII.t:
                guard i + 4 <= count, base[i + 1] == UInt8(ascii: "r"), base[i + 2] == UInt8(ascii: "u"),
                    base[i + 3] == UInt8(ascii: "e")
                else { throw invalidJSON() }
                i += 4
            case ASCII.f:
                guard i + 5 <= count, base[i + 1] == UInt8(ascii: "a"), base[i + 2] == UInt8(ascii: "l"),
                    base[i + 3] == UInt8(ascii: "s"), base[i + 4] == UInt8(ascii: "e")
                else { throw invalidJSON() }
                i += 5
            case ASCII.n:
                guard i + 4 <= count, base[i + 1] == UInt8(ascii: "u"), base[i + 2] == UInt8(ascii: "l"),
                    base[i + 3] == UInt8(ascii: "l")
                else { throw invalidJSON() }
                i += 4
            default:
                throw invalidJSON()
            }
            // After a value: close containers, or move to the next element or member.
            while true {
                guard let isObject = stack.last else {
                    i = skipWhitespace(i)
                    guard i == count else { throw invalidJSON() }
                    return top
                }
                i = skipWhitespace(i)
                guard i < count else { throw invalidJSON() }
                let c = base[i]
                if c == ASCII.comma {
                    i = skipWhitespace(i + 1)
                    guard i < count else { throw invalidJSON() }
                    let close = isObject ? ASCII.closeBrace : ASCII.closeBracket
                    if base[i] == close {
                        // Trailing comma, accepted as Foundation does.
                        stack.removeLast()
                        i += 1
                        continue
                    }
                    if isObject {
                        if stack.count == 1, let recorder {
                            i = try recordMemberKey(i, recorder)
                        } else {
                            i = try validateMemberKey(i)
                        }
                    }
                    continue value
                } else if c == (isObject ? ASCII.closeBrace : ASCII.closeBracket) {
                    stack.removeLast()
                    i += 1
                    continue
                } else {
                    throw invalidJSON()
                }
            }
        }
    }

    /// `validateMemberKey` for a member of the top-level object, recorded. Inlined: a call
    /// per member would retain and release the recorder each time.
    @inline(__always)
    private func recordMemberKey(_ i: Int, _ recorder: DecoderState) throws -> Int {
        guard i < count, base[i] == ASCII.quote else { throw invalidJSON() }
        let (keyEnd, simple) = stringExtent(i)
        var v = simple ? keyEnd + 1 : try skipStringValidating(i)
        guard v <= count, base[v - 1] == ASCII.quote else { throw invalidJSON() }
        v = skipWhitespace(v)
        guard v < count, base[v] == ASCII.colon else { throw invalidJSON() }
        v = skipWhitespace(v + 1)
        recorder.recordTopLevelMember(keyStart: i + 1, keyEnd: keyEnd, value: v, simple: simple)
        return v
    }

    /// At a member's key: checks `"key" :` and returns the offset of its value.
    private func validateMemberKey(_ i: Int) throws -> Int {
        guard i < count, base[i] == ASCII.quote else { throw invalidJSON() }
        var i = try skipStringValidating(i)
        i = skipWhitespace(i)
        guard i < count, base[i] == ASCII.colon else { throw invalidJSON() }
        return skipWhitespace(i + 1)
    }

    /// Skips a string starting at its opening quote, checking only its shape (closed,
    /// `\u` followed by four bytes none of which is a quote). Returns the offset after
    /// the closing quote.
    private func skipStringValidating(_ start: Int) throws -> Int {
        var i = start + 1
        while i < count {
            i = nextQuoteOrBackslash(i)
            guard i < count else { break }
            let c = base[i]
            if c == ASCII.quote { return i + 1 }
            if c == ASCII.backslash {
                guard i + 1 < count else { throw invalidJSON() }
                if base[i + 1] == ASCII.u {
                    guard i + 6 <= count else { throw invalidJSON() }
                    for k in 2..<6 where base[i + k] == ASCII.quote { throw invalidJSON() }
                    i += 6
                } else {
                    i += 2
                }
            } else {
                i += 1
            }
        }
        throw invalidJSON()
    }
}
