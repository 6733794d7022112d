import Foundation

// Errors, and reading the primitive values in place: booleans and strings (numbers are
// DecoderState+Numbers.swift).

extension DecoderState {
    // MARK: Errors

    func describe(at p: Int) -> String {
        switch input.byte(p) {
        case ASCII.quote: return "a string"
        case ASCII.openBrace: return "a dictionary"
        case ASCII.openBracket: return "an array"
        case ASCII.t, ASCII.f: return "bool"
        case ASCII.n: return "null"
        default: return "number"
        }
    }

    @inline(never)
    func mismatch(_ type: Any.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) -> DecodingError {
        if input.byte(p) == ASCII.n {
            return DecodingError.valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: PathNode.path(node, key),
                    debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        }
        return DecodingError.typeMismatch(
            type,
            DecodingError.Context(
                codingPath: PathNode.path(node, key),
                debugDescription: "Expected to decode \(type) but found \(describe(at: p)) instead."))
    }

    @inline(__always)
    func checkNotNull(_ type: Any.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) throws {
        if input.byte(p) == ASCII.n {
            throw DecodingError.valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: PathNode.path(node, key),
                    debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        }
    }

    // MARK: Primitive values

    // Readers return nil for a value of another kind (null included) and throw only
    // for corrupt input; the decode functions add the error with its coding path.

    @inline(__always)
    func readBool(at p: Int) -> Bool? {
        let c = input.byte(p)
        if c == ASCII.t { lastEnd = p + 4; return true }
        if c == ASCII.f { lastEnd = p + 5; return false }
        return nil
    }

    @inline(__always)
    func readString(at p: Int) throws -> String? {
        guard input.byte(p) == ASCII.quote else { return nil }
        var end = 0
        let string = try input.readString(p, end: &end)
        lastEnd = end
        return string
    }

    /// The error for a value that is not a `type`: Foundation reports null as
    /// `valueNotFound`, except for Bool (a type mismatch).
    @inline(never)
    func failure(_ type: Any.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) -> DecodingError {
        if type == Bool.self {
            return DecodingError.typeMismatch(
                Bool.self,
                DecodingError.Context(
                    codingPath: PathNode.path(node, key),
                    debugDescription: "Expected to decode \(Bool.self) but found \(describe(at: p)) instead."))
        }
        return mismatch(type, at: p, node, key)
    }

    @inline(__always)
    func decodeBool(at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) throws -> Bool {
        if let value = readBool(at: p) { return value }
        throw failure(Bool.self, at: p, node, key)
    }

    @inline(__always)
    func decodeString(at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) throws -> String {
        if let value = try readString(at: p) { return value }
        throw failure(String.self, at: p, node, key)
    }
}
