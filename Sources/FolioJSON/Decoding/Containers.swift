import Foundation

// The three containers. The keyed one looks keys up in the member table its object was
// scanned into (trying the member after the last one found first: synthesized
// `init(from:)` asks in declaration order, usually the encoding order); the unkeyed
// one walks its elements in order; both read primitives in place.

struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let state: DecoderState
    let node: PathNode?
    /// Arena offset of the hint slot; the members follow, three slots each.
    let table: Int
    let members: Int
    /// Set when keys are compared as decoded strings rather than bytes.
    let decoded: DecodedKeys?

    var codingPath: [any CodingKey] { PathNode.path(node) }

    var allKeys: [Key] {
        if let decoded { return decoded.ordered.compactMap { Key(stringValue: $0) } }
        var keys: [Key] = []
        let m = state.arena + table + 1
        for j in 0..<members where m[3 * j + 2] >= 0 {
            let name = String(decoding: UnsafeBufferPointer(start: state.input.base + m[3 * j], count: m[3 * j + 1] - m[3 * j]), as: UTF8.self)
            if let key = Key(stringValue: name) { keys.append(key) }
        }
        return keys
    }

    func contains(_ key: Key) -> Bool { find(key) != nil }

    /// The offset of the value of `key`, or `nil`.
    @inline(__always)
    func find(_ key: Key) -> Int? {
        if let decoded { return decoded.values[key.stringValue] }
        var name = key.stringValue
        return name.withUTF8 { wanted -> Int? in
            let base = state.input.base
            let m = state.arena + table + 1
            let hint = state.arena[table]
            let length = wanted.count
            if hint < members {
                let h = 3 * hint
                if m[h + 2] >= 0, m[h + 1] - m[h] == length,
                   length == 0 || memcmp(base + m[h], wanted.baseAddress!, length) == 0 {
                    state.arena[table] = hint + 1
                    return m[h + 2]
                }
            }
            for j in 0..<members where j != hint {
                let h = 3 * j
                if m[h + 2] >= 0, m[h + 1] - m[h] == length,
                   length == 0 || memcmp(base + m[h], wanted.baseAddress!, length) == 0 {
                    state.arena[table] = j + 1
                    return m[h + 2]
                }
            }
            // A miss: -2 when the name is not ASCII (it may still match, see below).
            for b in wanted where b >= 0x80 { return -2 }
            return nil
        }.flatMap { $0 == -2 ? findCanonical(name) : $0 }
    }

    /// A key that is not ASCII can still equal an ASCII key as a Swift `String`
    /// (canonical equivalence, as Foundation's dictionary lookup compares).
    @inline(never)
    private func findCanonical(_ name: String) -> Int? {
        let m = state.arena + table + 1
        for j in 0..<members where m[3 * j + 2] >= 0 {
            let candidate = String(decoding: UnsafeBufferPointer(start: state.input.base + m[3 * j], count: m[3 * j + 1] - m[3 * j]), as: UTF8.self)
            if candidate == name { return m[3 * j + 2] }
        }
        return nil
    }

    @inline(__always)
    func value(_ key: Key) throws -> Int {
        guard let p = find(key) else { throw keyNotFound(key) }
        return p
    }

    @inline(never)
    func keyNotFound(_ key: some CodingKey) -> DecodingError {
        DecodingError.keyNotFound(key, DecodingError.Context(
            codingPath: codingPath,
            debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
    }

    /// The offset of a present, non-null value, or `nil`.
    @inline(__always)
    func presentValue(_ key: Key) -> Int? {
        guard let p = find(key), state.input.byte(p) != ASCII.n else { return nil }
        return p
    }

    @inline(__always)
    func read<T>(_ key: Key, _ type: T.Type, _ reader: (DecoderState, Int) throws -> T?) throws -> T {
        let p = try value(key)
        if let value = try reader(state, p) { return value }
        throw state.failure(T.self, at: p, node, key)
    }

    @inline(__always)
    func readIfPresent<T>(_ key: Key, _ type: T.Type, _ reader: (DecoderState, Int) throws -> T?) throws -> T? {
        guard let p = presentValue(key) else { return nil }
        if let value = try reader(state, p) { return value }
        throw state.failure(T.self, at: p, node, key)
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        state.input.byte(try value(key)) == ASCII.n
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try read(key, type) { $0.readBool(at: $1) } }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try read(key, type) { try $0.readString(at: $1) } }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try read(key, type) { try $0.readFloat(type, at: $1) } }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try read(key, type) { try $0.readFloat(type, at: $1) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try read(key, type) { try $0.readInteger(type, at: $1) } }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try read(key, type) { try $0.readInteger(type, at: $1) } }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try read(key, type) { try $0.readInteger(type, at: $1) } }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try read(key, type) { try $0.readInteger(type, at: $1) } }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try read(key, type) { try $0.readInteger(type, at: $1) } }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try read(key, type) { try $0.readInteger(type, at: $1) } }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try read(key, type) { try $0.readInteger(type, at: $1) } }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try read(key, type) { try $0.readInteger(type, at: $1) } }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try read(key, type) { try $0.readInteger(type, at: $1) } }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try read(key, type) { try $0.readInteger(type, at: $1) } }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try state.decodeValue(type, at: value(key), node, key) }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try readIfPresent(key, type) { $0.readBool(at: $1) } }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try readIfPresent(key, type) { try $0.readString(at: $1) } }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try readIfPresent(key, type) { try $0.readFloat(type, at: $1) } }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try readIfPresent(key, type) { try $0.readFloat(type, at: $1) } }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try readIfPresent(key, type) { try $0.readInteger(type, at: $1) } }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try readIfPresent(key, type) { try $0.readInteger(type, at: $1) } }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try readIfPresent(key, type) { try $0.readInteger(type, at: $1) } }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try readIfPresent(key, type) { try $0.readInteger(type, at: $1) } }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try readIfPresent(key, type) { try $0.readInteger(type, at: $1) } }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try readIfPresent(key, type) { try $0.readInteger(type, at: $1) } }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try readIfPresent(key, type) { try $0.readInteger(type, at: $1) } }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try readIfPresent(key, type) { try $0.readInteger(type, at: $1) } }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try readIfPresent(key, type) { try $0.readInteger(type, at: $1) } }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try readIfPresent(key, type) { try $0.readInteger(type, at: $1) } }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        // Not `Optional.map`: its frame and its closure's would be on the stack once per
        // level of a recursive type.
        guard let p = presentValue(key) else { return nil }
        return try state.decodeValue(type, at: p, node, key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let p = try value(key)
        return KeyedDecodingContainer(try state.makeKeyedContainer(type, at: p, node: PathNode(parent: node, key: key)))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let p = try value(key)
        return try state.makeUnkeyedContainer(at: p, node: PathNode(parent: node, key: key))
    }

    func superDecoder() throws -> any Decoder {
        subDecoder(position: find(name: "super"), key: StringKey("super"))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        subDecoder(position: find(key), key: key)
    }

    private func find(name: String) -> Int? {
        if let decoded { return decoded.values[name] }
        let m = state.arena + table + 1
        for j in 0..<members where m[3 * j + 2] >= 0 {
            let candidate = String(decoding: UnsafeBufferPointer(start: state.input.base + m[3 * j], count: m[3 * j + 1] - m[3 * j]), as: UTF8.self)
            if candidate == name { return m[3 * j + 2] }
        }
        return nil
    }

    /// A separate decoder for the value at `position`, or for `null` when absent.
    private func subDecoder(position: Int?, key: some CodingKey) -> any Decoder {
        let child = PathNode(parent: node, key: key)
        if let position {
            return DecoderState(input: state.input, options: state.options, userInfo: state.userInfo, position: position, node: child,
                                session: state.session)
        }
        return DecoderState(input: JSONInput.null, options: state.options, userInfo: state.userInfo, position: 0, node: child,
                            session: state.session)
    }
}

struct UnkeyedContainer: UnkeyedDecodingContainer {
    let state: DecoderState
    let node: PathNode?
    /// The offset of the opening bracket.
    let start: Int
    /// The offset of the next element, `nil` at the end.
    var cursor: Int?
    var currentIndex = 0

    var codingPath: [any CodingKey] { PathNode.path(node) }

    /// The arena slot caching `count` (-1 until counted), so loops that test
    /// `currentIndex < count!` stay linear.
    let countSlot: Int

    var count: Int? {
        if state.arena[countSlot] >= 0 { return state.arena[countSlot] }
        let input = state.input
        var n = 0
        var i = input.skipWhitespace(start + 1)
        if i < input.count, input.base[i] != ASCII.closeBracket {
            while true {
                n += 1
                guard let next = input.nextElement(after: input.skipValue(i)) else { break }
                i = next
            }
        }
        state.arena[countSlot] = n
        return n
    }

    var isAtEnd: Bool { cursor == nil }

    @inline(__always)
    func next(_ type: Any.Type) throws -> Int {
        guard let cursor else { throw atEnd(type) }
        return cursor
    }

    @inline(never)
    func atEnd(_ type: Any.Type, _ message: String = "Unkeyed container is at end.") -> DecodingError {
        DecodingError.valueNotFound(type, DecodingError.Context(
            codingPath: PathNode.path(node, IndexKey(currentIndex)),
            debugDescription: message))
    }

    @inline(__always)
    mutating func advance(after end: Int) {
        cursor = state.input.nextElement(after: end)
        currentIndex += 1
    }

    @inline(__always)
    mutating func primitive<T>(_ type: T.Type, _ read: (DecoderState, Int) throws -> T?) throws -> T {
        let p = try next(type)
        guard let value = try read(state, p) else { throw state.failure(T.self, at: p, node, IndexKey(currentIndex)) }
        advance(after: state.lastEnd)
        return value
    }

    /// For `decodeIfPresent`: true (and moved past it) at the end or at a `null`; Foundation
    /// also counts the index at the end.
    @inline(__always)
    mutating func skipAbsent() -> Bool {
        guard let p = cursor else {
            currentIndex += 1
            return true
        }
        guard state.input.byte(p) == ASCII.n else { return false }
        advance(after: p + 4)
        return true
    }

    @inline(__always)
    mutating func primitiveIfPresent<T>(_ type: T.Type, _ read: (DecoderState, Int) throws -> T?) throws -> T? {
        if skipAbsent() { return nil }
        return try primitive(type, read)
    }

    mutating func decodeNil() throws -> Bool {
        let p = try next(Never.self)
        guard state.input.byte(p) == ASCII.n else { return false }
        advance(after: p + 4)
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try primitive(type) { $0.readBool(at: $1) } }
    mutating func decode(_ type: String.Type) throws -> String { try primitive(type) { try $0.readString(at: $1) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try primitive(type) { try $0.readFloat(type, at: $1) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try primitive(type) { try $0.readFloat(type, at: $1) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try primitive(type) { try $0.readInteger(type, at: $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try primitive(type) { try $0.readInteger(type, at: $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try primitive(type) { try $0.readInteger(type, at: $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try primitive(type) { try $0.readInteger(type, at: $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try primitive(type) { try $0.readInteger(type, at: $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try primitive(type) { try $0.readInteger(type, at: $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try primitive(type) { try $0.readInteger(type, at: $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try primitive(type) { try $0.readInteger(type, at: $1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try primitive(type) { try $0.readInteger(type, at: $1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try primitive(type) { try $0.readInteger(type, at: $1) } }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let p = try next(type)
        state.lastEnd = -1
        let value = try state.decodeValue(type, at: p, node, IndexKey(currentIndex))
        moveOn(after: p)
        return value
    }

    /// Moves past the element at `p`, just decoded. Primitives read in place leave their
    /// end, so do objects a keyed container scanned; anything else is skipped. (A function
    /// of its own: `decode` is on the stack once per level of nested arrays.)
    @inline(__always)
    private mutating func moveOn(after p: Int) {
        if state.lastEnd > p {
            advance(after: state.lastEnd)
        } else if state.scannedStart == p {
            advance(after: state.scannedEnd)
        } else {
            advance(after: state.input.skipValue(p))
        }
    }

    mutating func decodeIfPresent(_ type: Bool.Type) throws -> Bool? { try primitiveIfPresent(type) { $0.readBool(at: $1) } }
    mutating func decodeIfPresent(_ type: String.Type) throws -> String? { try primitiveIfPresent(type) { try $0.readString(at: $1) } }
    mutating func decodeIfPresent(_ type: Double.Type) throws -> Double? { try primitiveIfPresent(type) { try $0.readFloat(type, at: $1) } }
    mutating func decodeIfPresent(_ type: Float.Type) throws -> Float? { try primitiveIfPresent(type) { try $0.readFloat(type, at: $1) } }
    mutating func decodeIfPresent(_ type: Int.Type) throws -> Int? { try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) } }
    mutating func decodeIfPresent(_ type: Int8.Type) throws -> Int8? { try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) } }
    mutating func decodeIfPresent(_ type: Int16.Type) throws -> Int16? { try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) } }
    mutating func decodeIfPresent(_ type: Int32.Type) throws -> Int32? { try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) } }
    mutating func decodeIfPresent(_ type: Int64.Type) throws -> Int64? { try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) } }
    mutating func decodeIfPresent(_ type: UInt.Type) throws -> UInt? { try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) } }
    mutating func decodeIfPresent(_ type: UInt8.Type) throws -> UInt8? { try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) } }
    mutating func decodeIfPresent(_ type: UInt16.Type) throws -> UInt16? { try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) } }
    mutating func decodeIfPresent(_ type: UInt32.Type) throws -> UInt32? { try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) } }
    mutating func decodeIfPresent(_ type: UInt64.Type) throws -> UInt64? { try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) } }

    mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
        if skipAbsent() { return nil }
        return try decode(type)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let p = try next(KeyedDecodingContainer<NestedKey>.self)
        let container = try state.makeKeyedContainer(type, at: p, node: PathNode(parent: node, key: IndexKey(currentIndex)))
        advance(after: state.input.skipValue(p))
        return KeyedDecodingContainer(container)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let p = cursor else {
            throw atEnd(UnkeyedDecodingContainer.self, "Cannot get nested unkeyed container -- unkeyed container is at end.")
        }
        let container = try state.makeUnkeyedContainer(at: p, node: PathNode(parent: node, key: IndexKey(currentIndex)))
        advance(after: state.input.skipValue(p))
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        guard let p = cursor else {
            throw atEnd(Decoder.self, "Cannot get superDecoder() -- unkeyed container is at end.")
        }
        let decoder = DecoderState(input: state.input, options: state.options, userInfo: state.userInfo,
                                   position: p, node: PathNode(parent: node, key: IndexKey(currentIndex)), session: state.session)
        advance(after: state.input.skipValue(p))
        return decoder
    }
}

struct SingleValueContainer: SingleValueDecodingContainer {
    let state: DecoderState
    let position: Int
    let node: PathNode?

    var codingPath: [any CodingKey] { PathNode.path(node) }

    private var noKey: (any CodingKey)? { nil }

    func decodeNil() -> Bool { state.input.byte(position) == ASCII.n }
    func decode(_ type: Bool.Type) throws -> Bool { try state.decodeBool(at: position, node, noKey) }
    func decode(_ type: String.Type) throws -> String { try state.decodeString(at: position, node, noKey) }
    func decode(_ type: Double.Type) throws -> Double { try state.decodeFloat(type, at: position, node, noKey) }
    func decode(_ type: Float.Type) throws -> Float { try state.decodeFloat(type, at: position, node, noKey) }
    func decode(_ type: Int.Type) throws -> Int { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: Int8.Type) throws -> Int8 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: Int16.Type) throws -> Int16 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: Int32.Type) throws -> Int32 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: Int64.Type) throws -> Int64 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: UInt.Type) throws -> UInt { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try state.decodeValue(type, at: position, node, noKey) }
}

extension JSONInput {
    /// A `null`, the value of a `superDecoder(forKey:)` whose key is absent.
    // Read-only after initialization.
    nonisolated(unsafe) static let null: JSONInput = {
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 4)
        for (i, b) in "null".utf8.enumerated() { pointer[i] = b }
        return JSONInput(UnsafeRawBufferPointer(start: pointer, count: 4))
    }()
}

extension FolioJSONDecoder {
    /// Foundation's `convertFromSnakeCase`: `"image_url"` → `"imageUrl"`; leading and
    /// trailing underscores kept; a key without inner underscores unchanged.
    static func convertFromSnakeCase(_ key: String) -> String {
        guard !key.isEmpty else { return key }
        guard let firstNonUnderscore = key.firstIndex(where: { $0 != "_" }) else { return key }
        var lastNonUnderscore = key.index(before: key.endIndex)
        while lastNonUnderscore > firstNonUnderscore && key[lastNonUnderscore] == "_" {
            key.formIndex(before: &lastNonUnderscore)
        }
        let keyRange = firstNonUnderscore...lastNonUnderscore
        let leading = key[key.startIndex..<firstNonUnderscore]
        let trailing = key[key.index(after: lastNonUnderscore)..<key.endIndex]
        let components = key[keyRange].split(separator: "_")
        let joined: String
        if components.count == 1 {
            joined = String(key[keyRange])
        } else {
            joined = ([components[0].lowercased()] + components[1...].map { $0.capitalized }).joined()
        }
        return String(leading) + joined + String(trailing)
    }
}
