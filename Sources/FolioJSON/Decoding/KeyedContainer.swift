import Foundation

// The keyed container looks keys up in the member table its object was scanned into
// (trying the member after the last one found first: synthesized `init(from:)` asks in
// declaration order, usually the encoding order), and reads primitives in place.

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
            let name = String(
                decoding: UnsafeBufferPointer(start: state.input.base + m[3 * j], count: m[3 * j + 1] - m[3 * j]),
                as: UTF8.self)
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
                    length == 0 || memcmp(base + m[h], wanted.baseAddress!, length) == 0
                {
                    state.arena[table] = hint + 1
                    return m[h + 2]
                }
            }
            for j in 0..<members where j != hint {
                let h = 3 * j
                if m[h + 2] >= 0, m[h + 1] - m[h] == length,
                    length == 0 || memcmp(base + m[h], wanted.baseAddress!, length) == 0
                {
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
            let candidate = String(
                decoding: UnsafeBufferPointer(start: state.input.base + m[3 * j], count: m[3 * j + 1] - m[3 * j]),
                as: UTF8.self)
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
        DecodingError.keyNotFound(
            key,
            DecodingError.Context(
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
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try read(key, type) { try $0.readString(at: $1) }
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try read(key, type) { try $0.readFloat(type, at: $1) }
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try read(key, type) { try $0.readFloat(type, at: $1) }
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try read(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try read(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try read(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try read(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try read(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try read(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try read(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try read(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try read(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try read(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try state.decodeValue(type, at: value(key), node, key)
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try readIfPresent(key, type) { $0.readBool(at: $1) }
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try readIfPresent(key, type) { try $0.readString(at: $1) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try readIfPresent(key, type) { try $0.readFloat(type, at: $1) }
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try readIfPresent(key, type) { try $0.readFloat(type, at: $1) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try readIfPresent(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
        try readIfPresent(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        try readIfPresent(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        try readIfPresent(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try readIfPresent(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        try readIfPresent(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        try readIfPresent(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        try readIfPresent(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        try readIfPresent(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        try readIfPresent(key, type) { try $0.readInteger(type, at: $1) }
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        // Not `Optional.map`: its frame and its closure's would be on the stack once per
        // level of a recursive type.
        guard let p = presentValue(key) else { return nil }
        return try state.decodeValue(type, at: p, node, key)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
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
            let candidate = String(
                decoding: UnsafeBufferPointer(start: state.input.base + m[3 * j], count: m[3 * j + 1] - m[3 * j]),
                as: UTF8.self)
            if candidate == name { return m[3 * j + 2] }
        }
        return nil
    }

    /// A separate decoder for the value at `position`, or for `null` when absent.
    private func subDecoder(position: Int?, key: some CodingKey) -> any Decoder {
        let child = PathNode(parent: node, key: key)
        if let position {
            return DecoderState(
                input: state.input, options: state.options, userInfo: state.userInfo, position: position, node: child,
                session: state.session)
        }
        return DecoderState(
            input: JSONInput.null, options: state.options, userInfo: state.userInfo, position: 0, node: child,
            session: state.session)
    }
}
