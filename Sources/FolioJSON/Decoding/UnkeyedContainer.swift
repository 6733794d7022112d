import Foundation

// The unkeyed container walks its elements in order and reads primitives in place.

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
        DecodingError.valueNotFound(
            type,
            DecodingError.Context(
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
    mutating func decode(_ type: Double.Type) throws -> Double {
        try primitive(type) { try $0.readFloat(type, at: $1) }
    }
    mutating func decode(_ type: Float.Type) throws -> Float { try primitive(type) { try $0.readFloat(type, at: $1) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try primitive(type) { try $0.readInteger(type, at: $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try primitive(type) { try $0.readInteger(type, at: $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 {
        try primitive(type) { try $0.readInteger(type, at: $1) }
    }
    mutating func decode(_ type: Int32.Type) throws -> Int32 {
        try primitive(type) { try $0.readInteger(type, at: $1) }
    }
    mutating func decode(_ type: Int64.Type) throws -> Int64 {
        try primitive(type) { try $0.readInteger(type, at: $1) }
    }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try primitive(type) { try $0.readInteger(type, at: $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 {
        try primitive(type) { try $0.readInteger(type, at: $1) }
    }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
        try primitive(type) { try $0.readInteger(type, at: $1) }
    }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 {
        try primitive(type) { try $0.readInteger(type, at: $1) }
    }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 {
        try primitive(type) { try $0.readInteger(type, at: $1) }
    }

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

    mutating func decodeIfPresent(_ type: Bool.Type) throws -> Bool? {
        try primitiveIfPresent(type) { $0.readBool(at: $1) }
    }
    mutating func decodeIfPresent(_ type: String.Type) throws -> String? {
        try primitiveIfPresent(type) { try $0.readString(at: $1) }
    }
    mutating func decodeIfPresent(_ type: Double.Type) throws -> Double? {
        try primitiveIfPresent(type) { try $0.readFloat(type, at: $1) }
    }
    mutating func decodeIfPresent(_ type: Float.Type) throws -> Float? {
        try primitiveIfPresent(type) { try $0.readFloat(type, at: $1) }
    }
    mutating func decodeIfPresent(_ type: Int.Type) throws -> Int? {
        try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) }
    }
    mutating func decodeIfPresent(_ type: Int8.Type) throws -> Int8? {
        try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) }
    }
    mutating func decodeIfPresent(_ type: Int16.Type) throws -> Int16? {
        try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) }
    }
    mutating func decodeIfPresent(_ type: Int32.Type) throws -> Int32? {
        try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) }
    }
    mutating func decodeIfPresent(_ type: Int64.Type) throws -> Int64? {
        try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) }
    }
    mutating func decodeIfPresent(_ type: UInt.Type) throws -> UInt? {
        try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) }
    }
    mutating func decodeIfPresent(_ type: UInt8.Type) throws -> UInt8? {
        try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) }
    }
    mutating func decodeIfPresent(_ type: UInt16.Type) throws -> UInt16? {
        try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) }
    }
    mutating func decodeIfPresent(_ type: UInt32.Type) throws -> UInt32? {
        try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) }
    }
    mutating func decodeIfPresent(_ type: UInt64.Type) throws -> UInt64? {
        try primitiveIfPresent(type) { try $0.readInteger(type, at: $1) }
    }

    mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
        if skipAbsent() { return nil }
        return try decode(type)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let p = try next(KeyedDecodingContainer<NestedKey>.self)
        let container = try state.makeKeyedContainer(
            type, at: p, node: PathNode(parent: node, key: IndexKey(currentIndex)))
        advance(after: state.input.skipValue(p))
        return KeyedDecodingContainer(container)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let p = cursor else {
            throw atEnd(
                UnkeyedDecodingContainer.self, "Cannot get nested unkeyed container -- unkeyed container is at end.")
        }
        let container = try state.makeUnkeyedContainer(at: p, node: PathNode(parent: node, key: IndexKey(currentIndex)))
        advance(after: state.input.skipValue(p))
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        guard let p = cursor else {
            throw atEnd(Decoder.self, "Cannot get superDecoder() -- unkeyed container is at end.")
        }
        let decoder = DecoderState(
            input: state.input, options: state.options, userInfo: state.userInfo,
            position: p, node: PathNode(parent: node, key: IndexKey(currentIndex)), session: state.session)
        advance(after: state.input.skipValue(p))
        return decoder
    }
}
