import Foundation

// Any `Decodable` value: the special types (Date, Data, URL) by strategy, and the fast paths
// for arrays and dictionaries of primitives. Decimal is read with the other numbers
// (DecoderState+Numbers.swift).

/// The types `DecoderState.decodeValue` reads directly, without their `init(from:)`.
enum KnownDecodable {
    case string, int, double, bool, date, data, url, decimal, float, int64, uint64, int32, uint8
    case strings, ints, doubles, stringsByString, intsByString
    /// `[String: V]` under a key strategy (its keys are not converted).
    case rawKeyedDictionary
}

extension DecoderState {
    /// Decodes a `T` at `p`, its path `node` + `key`.
    ///
    /// Decoding nests as the value does (each `init(from:)` asks for its members), so this
    /// frame is on the stack once per level of nesting: the known types are read in a
    /// function of their own, whose large frame is gone again before a nested `init(from:)`
    /// runs, and the decoder is moved and restored without a closure.
    @inline(__always)
    func decodeValue<T: Decodable>(_ type: T.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) throws -> T {
        if let known = knownDecodable(T.self) { return try decodeKnownValue(type, known, at: p, node, key) }
        let saved = enter(p, node, key)
        let value: T
        do {
            value = try T(from: self)
        } catch {
            leave(saved)
            throw error
        }
        leave(saved)
        lastEnd = -1
        return value
    }

    /// Which of the types read directly `T` is, if any: primitives and common collections
    /// reached through generic code (an array's or a dictionary's elements, a generic
    /// wrapper). A constant where `T` is known at compile time.
    @inline(__always)
    func knownDecodable<T: Decodable>(_ type: T.Type) -> KnownDecodable? {
        if T.self == String.self { return .string }
        if T.self == Int.self { return .int }
        if T.self == Double.self { return .double }
        if T.self == Bool.self { return .bool }
        if T.self == Date.self { return .date }
        if T.self == Data.self { return .data }
        if T.self == URL.self { return .url }
        if T.self == Decimal.self { return .decimal }
        if T.self == Float.self { return .float }
        if T.self == Int64.self { return .int64 }
        if T.self == UInt64.self { return .uint64 }
        if T.self == Int32.self { return .int32 }
        if T.self == UInt8.self { return .uint8 }
        if T.self == [String].self { return .strings }
        if T.self == [Int].self { return .ints }
        if T.self == [Double].self { return .doubles }
        if T.self == [String: String].self { return .stringsByString }
        if T.self == [String: Int].self { return .intsByString }
        if case .convertFromSnakeCase = options.keyDecodingStrategy, T.self is any StringKeyedDictionaryMarker.Type {
            return .rawKeyedDictionary
        }
        return nil
    }

    /// `T`, one of the `known` types, read directly, as its own `init(from:)` would read it,
    /// without a nested decoder round trip.
    @inline(__always)
    func decodeKnownValue<T: Decodable>(
        _ type: T.Type, _ known: KnownDecodable, at p: Int, _ node: PathNode?,
        _ key: (any CodingKey)?
    ) throws -> T {
        switch known {
        case .string: return unsafeBitCast(try decodeString(at: p, node, key), to: T.self)
        case .int: return unsafeBitCast(try decodeInteger(Int.self, at: p, node, key), to: T.self)
        case .double: return unsafeBitCast(try decodeFloat(Double.self, at: p, node, key), to: T.self)
        case .bool: return unsafeBitCast(try decodeBool(at: p, node, key), to: T.self)
        case .date: return unsafeBitCast(try decodeDate(at: p, node, key), to: T.self)
        case .data: return unsafeBitCast(try decodeData(at: p, node, key), to: T.self)
        case .url: return unsafeBitCast(try decodeURL(at: p, node, key), to: T.self)
        case .decimal: return unsafeBitCast(try decodeDecimal(at: p, node, key), to: T.self)
        case .float: return unsafeBitCast(try decodeFloat(Float.self, at: p, node, key), to: T.self)
        case .int64: return unsafeBitCast(try decodeInteger(Int64.self, at: p, node, key), to: T.self)
        case .uint64: return unsafeBitCast(try decodeInteger(UInt64.self, at: p, node, key), to: T.self)
        case .int32: return unsafeBitCast(try decodeInteger(Int32.self, at: p, node, key), to: T.self)
        case .uint8: return unsafeBitCast(try decodeInteger(UInt8.self, at: p, node, key), to: T.self)
        case .strings:
            return unsafeBitCast(
                try decodeArray(String.self, at: p, node, key) { try $0.readString(at: $1) }, to: T.self)
        case .ints:
            return unsafeBitCast(
                try decodeArray(Int.self, at: p, node, key) { try $0.readInteger(Int.self, at: $1) }, to: T.self)
        case .doubles:
            return unsafeBitCast(
                try decodeArray(Double.self, at: p, node, key) { try $0.readFloat(Double.self, at: $1) }, to: T.self)
        case .stringsByString:
            return unsafeBitCast(try decodeStringDictionary(String.self, at: p, node, key), to: T.self)
        case .intsByString: return unsafeBitCast(try decodeStringDictionary(Int.self, at: p, node, key), to: T.self)
        case .rawKeyedDictionary:
            let dictionary = T.self as! any StringKeyedDictionaryMarker.Type
            return try decodeRawKeyedDictionary(dictionary.valueType, at: p, node, key) as! T
        }
    }

    /// Moves this decoder to the value at `p`, path `node` + `key`; returns what `leave`
    /// restores.
    @inline(__always)
    func enter(_ p: Int, _ node: PathNode?, _ key: (any CodingKey)?) -> (position: Int, node: PathNode?, arenaTop: Int)
    {
        let saved = (position, self.node, arenaTop)
        position = p
        if let key { self.node = PathNode(parent: node, key: key) } else { self.node = node }
        return saved
    }

    @inline(__always)
    func leave(_ saved: (position: Int, node: PathNode?, arenaTop: Int)) {
        position = saved.position
        node = saved.node
        arenaTop = saved.arenaTop
    }

    func decodeDate(at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) throws -> Date {
        try checkNotNull(Date.self, at: p, node, key)
        switch options.dateDecodingStrategy {
        case .deferredToDate:
            // What `Date(from:)` reads: seconds since 2001 as a Double.
            return Date(timeIntervalSinceReferenceDate: try decodeFloat(Double.self, at: p, node, key))
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try decodeFloat(Double.self, at: p, node, key))
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try decodeFloat(Double.self, at: p, node, key) / 1000.0)
        case .iso8601:
            let string = try decodeString(at: p, node, key)
            guard let date = try? Date.ISO8601FormatStyle().parse(string) else {
                // Foundation reports this one at the decoder's path, without the key.
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: PathNode.path(node),
                        debugDescription: "Expected date string to be ISO8601-formatted."))
            }
            return date
        }
    }

    func decodeData(at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) throws -> Data {
        try checkNotNull(Data.self, at: p, node, key)
        switch options.dataDecodingStrategy {
        case .deferredToData:
            let child = key.map { PathNode(parent: node, key: $0) } ?? node
            let data = try with(position: p, node: child) { try Data(from: self) }
            lastEnd = -1
            return data
        case .base64:
            guard input.byte(p) == ASCII.quote else {
                throw DecodingError.typeMismatch(
                    String.self,
                    DecodingError.Context(
                        codingPath: PathNode.path(node, key),
                        debugDescription: "Expected to decode \(String.self) but found \(describe(at: p)) instead."))
            }
            let string = try input.readString(p)
            lastEnd = -1
            guard let data = Data(base64Encoded: string) else {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: PathNode.path(node, key),
                        debugDescription: "Encountered Data is not valid Base64."))
            }
            return data
        }
    }

    func decodeURL(at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) throws -> URL {
        try checkNotNull(URL.self, at: p, node, key)
        let string = try decodeString(at: p, node, key)
        guard let url = URL(string: string) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: PathNode.path(node, key), debugDescription: "Invalid URL string."))
        }
        return url
    }

    /// An array of a primitive, read as `Array.init(from:)` reads it through an unkeyed
    /// container (same errors and paths; the path node is made only for an error).
    func decodeArray<E>(
        _ type: E.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?, _ read: (DecoderState, Int) throws -> E?
    ) throws -> [E] {
        let arrayNode = { key.map { PathNode(parent: node, key: $0) } ?? node }
        guard input.byte(p) == ASCII.openBracket else {
            _ = try makeUnkeyedContainer(at: p, node: arrayNode())
            return []
        }
        var result: [E] = []
        var i = input.skipWhitespace(p + 1)
        if i < input.count, input.base[i] != ASCII.closeBracket {
            // Room for a short list at once; longer ones grow as they are read.
            result.reserveCapacity(4)
            var index = 0
            while true {
                guard let element = try read(self, i) else {
                    throw failure(E.self, at: i, arrayNode(), IndexKey(index))
                }
                result.append(element)
                index += 1
                guard let next = input.nextElement(after: lastEnd) else { break }
                i = next
            }
        }
        lastEnd = -1
        return result
    }

    /// `[String: V]` for a primitive `V`, read as `Dictionary.init(from:)` reads it
    /// through a keyed container (first of duplicate keys wins, same errors and paths).
    func decodeStringDictionary<V: Decodable>(
        _ type: V.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?
    ) throws -> [String: V] {
        if case .convertFromSnakeCase = options.keyDecodingStrategy {
            return try decodeRawKeyedDictionary(V.self, at: p, node, key) as! [String: V]
        }
        let dictionaryNode = key.map { PathNode(parent: node, key: $0) } ?? node
        let container = try makeKeyedContainer(StringKey.self, at: p, node: dictionaryNode)
        var result: [String: V] = [:]
        if let decoded = container.decoded {
            result.reserveCapacity(decoded.ordered.count)
            for name in decoded.ordered {
                result[name] = try decodeValue(V.self, at: decoded.values[name]!, dictionaryNode, StringKey(name))
            }
            lastEnd = -1
            return result
        }
        result.reserveCapacity(container.members)
        let m = arena + container.table + 1
        for j in 0..<container.members where m[3 * j + 2] >= 0 {
            let name = String(
                decoding: UnsafeBufferPointer(start: input.base + m[3 * j], count: m[3 * j + 1] - m[3 * j]),
                as: UTF8.self)
            result[name] = try decodeValue(V.self, at: m[3 * j + 2], dictionaryNode, StringKey(name))
        }
        lastEnd = -1
        return result
    }

    /// `[String: V]` under a key strategy: Foundation keeps such keys as they are.
    func decodeRawKeyedDictionary(
        _ valueType: any Decodable.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?
    ) throws -> [String: Any] {
        try checkNotNull([String: Any].self, at: p, node, key)
        guard input.byte(p) == ASCII.openBrace else {
            throw DecodingError.typeMismatch(
                [String: Any].self,
                DecodingError.Context(
                    codingPath: PathNode.path(node, key),
                    debugDescription: "Expected to decode \([String: Any].self) but found \(describe(at: p)) instead."))
        }
        let dictionaryNode = key.map { PathNode(parent: node, key: $0) } ?? node
        var result: [String: Any] = [:]
        var i = input.skipWhitespace(p + 1)
        guard input.byte(i) == ASCII.quote else { lastEnd = -1; return result }
        while true {
            let name = try input.readString(i)
            var v = input.skipWhitespace(input.skipString(i))
            v = input.skipWhitespace(v + 1)
            let value = try decodeOpened(valueType, at: v, dictionaryNode, StringKey(name))
            if result[name] == nil { result[name] = value }
            guard let next = input.nextElement(after: input.skipValue(v)) else { break }
            i = next
        }
        lastEnd = -1
        return result
    }

    private func decodeOpened<T: Decodable>(
        _ type: T.Type, at p: Int, _ node: PathNode?, _ key: StringKey
    ) throws -> Any {
        try decodeValue(type, at: p, node, key)
    }
}
