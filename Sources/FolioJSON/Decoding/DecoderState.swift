import Foundation

// The one `Decoder` of a decode: the input, the options, the position of the value
// being decoded and its coding path. Nested values reuse it (position and path are
// saved and restored around each nested `init(from:)`), so decoding a struct allocates
// its container box and a path node, not a decoder. Containers and decoders handed to
// `init(from:)` must not be used after it returns (the input buffer is only valid
// during the decode), as with any in-place decoder.

/// A coding path, as a list from the value up to the root.
final class PathNode {
    let parent: PathNode?
    let key: any CodingKey

    init(parent: PathNode?, key: any CodingKey) {
        self.parent = parent
        self.key = key
    }

    static func path(_ node: PathNode?) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var node = node
        while let current = node {
            keys.append(current.key)
            node = current.parent
        }
        return keys.reversed()
    }

    static func path(_ node: PathNode?, _ key: (any CodingKey)?) -> [any CodingKey] {
        var keys = path(node)
        if let key { keys.append(key) }
        return keys
    }
}

/// The key of an array element in coding paths, as Foundation names it.
struct IndexKey: CodingKey {
    let index: Int
    init(_ index: Int) { self.index = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.index = intValue }
    var stringValue: String { "Index \(index)" }
    var intValue: Int? { index }
}

/// A key made from a string (the `super` key, raw dictionary keys).
struct StringKey: CodingKey {
    let stringValue: String
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { self.stringValue = String(intValue) }
    var intValue: Int? { nil }
}

/// `[String: V]`, which Foundation decodes with its raw keys when a key strategy is set.
protocol StringKeyedDictionaryMarker {
    static var valueType: any Decodable.Type { get }
}

extension Dictionary: StringKeyedDictionaryMarker where Key == String, Value: Decodable {
    static var valueType: any Decodable.Type { Value.self }
}

/// An object's keys when they cannot be compared byte for byte (escapes, non-ASCII
/// bytes, more than a few members, or a key strategy): decoded once, first one wins
/// for duplicates, as Foundation's decoder does.
final class DecodedKeys {
    var ordered: [String] = []
    var values: [String: Int] = [:]
}

/// One call of `FolioJSONDecoder.decode`, shared by every decoder state it makes (super
/// decoders included): marked finished when the call returns, after which the input and the
/// member tables are gone.
final class DecodeSession {
    var finished = false
}

final class DecoderState: Decoder {
    /// The input, valid only while the decode runs: read it through `input`.
    let storedInput: JSONInput
    let session: DecodeSession

    /// The input. A decoder or container kept by a type and used after `decode` returned
    /// would read a buffer that no longer exists: that stops here with a clear message
    /// instead (one well-predicted branch per access).
    var input: JSONInput {
        @inline(__always) get {
            precondition(!session.finished, Self.usedAfterDecode)
            return storedInput
        }
    }

    static let usedAfterDecode = "FolioJSONDecoder: a Decoder or decoding container was used after decode(_:from:) returned; keep the decoded values, not the decoder"
    let options: FolioJSONDecoder
    let userInfo: [CodingUserInfoKey: Any]
    /// The offset of the value `init(from:)` is decoding.
    var position: Int
    /// Its coding path.
    var node: PathNode?
    /// The end of the last primitive value read (for unkeyed containers to move on).
    var lastEnd = 0
    /// The start and end of the last object a keyed container was made for (so an
    /// unkeyed container need not skip over an element its decoding scanned).
    var scannedStart = -1
    var scannedEnd = -1

    /// Member tables of the keyed containers: for each, a hint (the member to try
    /// first), then key start, key end and value offset of each member (-1: a later
    /// duplicate, never matched). Space used by a nested value is released when its
    /// `init(from:)` returns.
    var storedArena: UnsafeMutablePointer<Int>
    /// The member tables, valid only while the decode runs (see `input`).
    var arena: UnsafeMutablePointer<Int> {
        @inline(__always) get {
            precondition(!session.finished, Self.usedAfterDecode)
            return storedArena
        }
        @inline(__always) set { storedArena = newValue }
    }
    var arenaCapacity: Int
    var arenaTop = 0

    /// Whether `arena` was allocated here (else it is the caller's buffer).
    var ownsArena: Bool

    /// The top-level object's member table, recorded by the validation pass.
    var topObject = -1
    var topTable = 0
    var topMembers = 0
    var topSimple = true
    var topDeduplicated = false

    func beginTopLevelObject(at p: Int) {
        topObject = p
        topTable = reserveArena(1)
        arena[topTable] = 0
    }

    @inline(__always)
    func recordTopLevelMember(keyStart: Int, keyEnd: Int, value: Int, simple: Bool) {
        let slot = reserveArena(3)
        arena[slot] = keyStart
        arena[slot + 1] = keyEnd
        arena[slot + 2] = value
        topMembers += 1
        topSimple = topSimple && simple
    }

    init(input: JSONInput, options: FolioJSONDecoder, userInfo: [CodingUserInfoKey: Any], position: Int, node: PathNode?,
         arena: UnsafeMutableBufferPointer<Int>? = nil, session: DecodeSession) {
        self.storedInput = input
        self.session = session
        self.options = options
        self.userInfo = userInfo
        self.position = position
        self.node = node
        if let arena, let base = arena.baseAddress, arena.count > 0 {
            storedArena = base
            arenaCapacity = arena.count
            ownsArena = false
        } else {
            arenaCapacity = 64
            storedArena = .allocate(capacity: arenaCapacity)
            ownsArena = true
        }
    }

    deinit {
        if ownsArena { storedArena.deallocate() }
    }

    var codingPath: [any CodingKey] { PathNode.path(node) }

    @inline(__always)
    func reserveArena(_ slots: Int) -> Int {
        let start = arenaTop
        if arenaTop + slots > arenaCapacity { growArena(arenaTop + slots) }
        arenaTop += slots
        return start
    }

    @inline(never)
    func growArena(_ needed: Int) {
        var capacity = arenaCapacity * 2
        while capacity < needed { capacity *= 2 }
        let bigger = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
        bigger.moveInitialize(from: storedArena, count: arenaTop)
        if ownsArena { storedArena.deallocate() }
        storedArena = bigger
        arenaCapacity = capacity
        ownsArena = true
    }

    /// Runs `body` with the value at `position` and path `node` as this decoder's own,
    /// then restores the decoder.
    @inline(__always)
    func with<T>(position: Int, node: PathNode?, _ body: () throws -> T) rethrows -> T {
        let savedPosition = self.position
        let savedNode = self.node
        let savedTop = arenaTop
        self.position = position
        self.node = node
        defer {
            self.position = savedPosition
            self.node = savedNode
            self.arenaTop = savedTop
        }
        return try body()
    }

    // MARK: Decoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try KeyedDecodingContainer(makeKeyedContainer(Key.self, at: position, node: node))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try makeUnkeyedContainer(at: position, node: node)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(state: self, position: position, node: node)
    }

    // MARK: Containers

    func makeKeyedContainer<Key: CodingKey>(_ type: Key.Type, at p: Int, node: PathNode?) throws -> KeyedContainer<Key> {
        let c = input.byte(p)
        guard c == ASCII.openBrace else {
            if c == ASCII.n {
                throw DecodingError.valueNotFound([String: Any].self, DecodingError.Context(
                    codingPath: PathNode.path(node),
                    debugDescription: "Cannot get keyed decoding container -- found null value instead"))
            }
            throw DecodingError.typeMismatch([String: Any].self, DecodingError.Context(
                codingPath: PathNode.path(node),
                debugDescription: "Expected to decode \([String: Any].self) but found \(describe(at: p)) instead."))
        }
        if p == topObject {
            // Recorded by the validation pass; duplicates marked once.
            if topSimple, topMembers <= 32, case .useDefaultKeys = options.keyDecodingStrategy {
                if !topDeduplicated {
                    markDuplicates(table: topTable, members: topMembers)
                    topDeduplicated = true
                }
                arena[topTable] = 0
                return KeyedContainer(state: self, node: node, table: topTable, members: topMembers, decoded: nil)
            }
            return KeyedContainer(state: self, node: node, table: topTable, members: topMembers,
                                  decoded: try decodeKeys(table: topTable, members: topMembers))
        }
        // Scan the members once: key ranges and value offsets.
        let table = reserveArena(1)
        arena[table] = 0
        var members = 0
        var allSimple = true
        var i = input.skipWhitespace(p + 1)
        if input.byte(i) == ASCII.quote {
            while true {
                let (keyEnd, simple) = input.stringExtent(i)
                allSimple = allSimple && simple
                var v = input.skipWhitespace(keyEnd + 1)
                v = input.skipWhitespace(v + 1) // past the colon
                let slot = reserveArena(3)
                arena[slot] = i + 1
                arena[slot + 1] = keyEnd
                arena[slot + 2] = v
                members += 1
                let valueEnd = input.skipValue(v)
                guard let next = input.nextElement(after: valueEnd) else {
                    // Only for the value being decoded (not for objects read inside
                    // it, which would hide it).
                    guard p == position else { break }
                    scannedStart = p
                    scannedEnd = input.skipWhitespace(valueEnd)
                    if input.byte(scannedEnd) == ASCII.comma { scannedEnd = input.skipWhitespace(scannedEnd + 1) }
                    scannedEnd += 1
                    break
                }
                i = next
            }
        } else if p == position {
            scannedStart = p
            scannedEnd = i + 1
        }
        if allSimple, members <= 32, case .useDefaultKeys = options.keyDecodingStrategy {
            markDuplicates(table: table, members: members)
            return KeyedContainer(state: self, node: node, table: table, members: members, decoded: nil)
        }
        return KeyedContainer(state: self, node: node, table: table, members: members,
                              decoded: try decodeKeys(table: table, members: members))
    }

    /// Marks later duplicates of a key (byte-equal keys) as never matching.
    private func markDuplicates(table: Int, members: Int) {
        guard members > 1 else { return }
        let m = arena + table + 1
        for j in 1..<members {
            let length = m[3 * j + 1] - m[3 * j]
            for k in 0..<j where m[3 * k + 2] >= 0 && m[3 * k + 1] - m[3 * k] == length {
                if memcmp(input.base + m[3 * j], input.base + m[3 * k], length) == 0 {
                    m[3 * j + 2] = -1
                    break
                }
            }
        }
    }

    private func decodeKeys(table: Int, members: Int) throws -> DecodedKeys {
        let keys = DecodedKeys()
        keys.values.reserveCapacity(members)
        let snake: Bool
        if case .convertFromSnakeCase = options.keyDecodingStrategy { snake = true } else { snake = false }
        for j in 0..<members {
            let m = arena + table + 1 + 3 * j
            var key = try input.readString(m[0] - 1)
            if snake { key = FolioJSONDecoder.convertFromSnakeCase(key) }
            if keys.values[key] == nil {
                keys.values[key] = m[2]
                keys.ordered.append(key)
            }
        }
        return keys
    }

    func makeUnkeyedContainer(at p: Int, node: PathNode?) throws -> UnkeyedContainer {
        let c = input.byte(p)
        guard c == ASCII.openBracket else {
            if c == ASCII.n {
                throw DecodingError.valueNotFound([Any].self, DecodingError.Context(
                    codingPath: PathNode.path(node),
                    debugDescription: "Cannot get unkeyed decoding container -- found null value instead"))
            }
            throw DecodingError.typeMismatch([Any].self, DecodingError.Context(
                codingPath: PathNode.path(node),
                debugDescription: "Expected to decode \([Any].self) but found \(describe(at: p)) instead."))
        }
        let first = input.skipWhitespace(p + 1)
        let c1 = input.byte(first)
        let countSlot = reserveArena(1)
        arena[countSlot] = -1
        return UnkeyedContainer(state: self, node: node, start: p,
                                cursor: (c1 == ASCII.closeBracket || first >= input.count) ? nil : first,
                                countSlot: countSlot)
    }

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
            return DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: PathNode.path(node, key),
                debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        }
        return DecodingError.typeMismatch(type, DecodingError.Context(
            codingPath: PathNode.path(node, key),
            debugDescription: "Expected to decode \(type) but found \(describe(at: p)) instead."))
    }

    @inline(__always)
    func checkNotNull(_ type: Any.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) throws {
        if input.byte(p) == ASCII.n {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
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

    @inline(__always)
    func readInteger<T: FixedWidthInteger>(_ type: T.Type, at p: Int) throws -> T? {
        let c = input.byte(p)
        guard c == ASCII.minus || (c >= ASCII.zero && c <= ASCII.nine) else { return nil }
        let end = input.numberEnd(p)
        lastEnd = end
        if let value = input.plainInteger(p, end, as: T.self) { return value }
        return try slowInteger(T.self, p, end)
    }

    @inline(__always)
    func readFloat<T: BinaryFloatingPoint & LosslessStringConvertible>(_ type: T.Type, at p: Int) throws -> T? {
        let c = input.byte(p)
        if c == ASCII.minus || (c >= ASCII.zero && c <= ASCII.nine) {
            let end = input.numberEnd(p)
            lastEnd = end
            if let value: T = fastFloat(p, end) { return value }
            return try slowFloat(T.self, p, end)
        }
        if c == ASCII.quote, case .convertFromString(let positiveInfinity, let negativeInfinity, let nan) = options.nonConformingFloatDecodingStrategy {
            if let value: T = nonConforming(p, positiveInfinity, negativeInfinity, nan) {
                lastEnd = input.skipString(p)
                return value
            }
        }
        return nil
    }

    /// The error for a value that is not a `type`: Foundation reports null as
    /// `valueNotFound`, except for Bool (a type mismatch).
    @inline(never)
    func failure(_ type: Any.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) -> DecodingError {
        if type == Bool.self {
            return DecodingError.typeMismatch(Bool.self, DecodingError.Context(
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

    @inline(__always)
    func decodeInteger<T: FixedWidthInteger>(_ type: T.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) throws -> T {
        if let value = try readInteger(T.self, at: p) { return value }
        throw failure(T.self, at: p, node, key)
    }

    @inline(__always)
    func decodeFloat<T: BinaryFloatingPoint & LosslessStringConvertible>(_ type: T.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) throws -> T {
        if let value = try readFloat(T.self, at: p) { return value }
        throw failure(T.self, at: p, node, key)
    }

    /// Foundation's rules for a number that is not a plain integer of the type: read
    /// it as a Double and keep it if exactly integral and below 2^53; above, read its
    /// decimal digits, truncating any fraction.
    @inline(never)
    func slowInteger<T: FixedWidthInteger>(_ type: T.Type, _ start: Int, _ end: Int) throws -> T {
        guard input.isValidNumber(start, end) else { throw invalidJSON() }
        let token = input.tokenString(start, end)
        if let double = Double(token) {
            guard let value = T(exactly: double) else { throw invalidJSON() }
            if double.magnitude < 9007199254740992.0 { return value }
        }
        // Exact decimal arithmetic on the digits (as Foundation's Decimal fallback).
        var negative = false
        var mantissa: UInt64 = 0
        var overflow = false
        var exponent = 0
        var i = start
        if input.base[i] == ASCII.minus { negative = true; i += 1 }
        var afterDot = false
        // Trailing zeros of the digits go to the exponent (Decimal keeps its mantissa
        // compact), so "9223372036854775807.0" fits a UInt64 mantissa.
        var pendingZeros = 0
        while i < end {
            let c = input.base[i]
            if c == ASCII.dot { afterDot = true; i += 1; continue }
            if c == ASCII.lowerE || c == ASCII.upperE { break }
            if afterDot { exponent -= 1 }
            i += 1
            if c == ASCII.zero { pendingZeros += 1; continue }
            for _ in 0...pendingZeros {
                let (m, o) = mantissa.multipliedReportingOverflow(by: 10)
                if o { overflow = true }
                mantissa = m
            }
            pendingZeros = 0
            let (s, o) = mantissa.addingReportingOverflow(UInt64(c - ASCII.zero))
            if o { overflow = true }
            mantissa = s
        }
        if mantissa == 0 { pendingZeros = 0 }
        exponent += pendingZeros
        if i < end {
            i += 1
            var expNegative = false
            if input.base[i] == ASCII.minus { expNegative = true; i += 1 } else if input.base[i] == ASCII.plus { i += 1 }
            var e = 0
            while i < end { e = min(e * 10 + Int(input.base[i] - ASCII.zero), 100_000); i += 1 }
            exponent += expNegative ? -e : e
        }
        guard !overflow else { throw invalidJSON() }
        if exponent < 0 {
            for _ in 0 ..< min(-exponent, 40) { mantissa /= 10 }
        } else {
            for _ in 0 ..< exponent {
                let (m, o) = mantissa.multipliedReportingOverflow(by: 10)
                guard !o else { throw invalidJSON() }
                mantissa = m
            }
        }
        if negative {
            guard mantissa != 0, let value = T(exactly: mantissa), T.isSigned else { throw invalidJSON() }
            return value * -1
        }
        guard let value = T(exactly: mantissa) else { throw invalidJSON() }
        return value
    }

    /// Exact conversions of a decimal `m × 10^k` with at most 19 significant digits:
    /// with at most 15 digits and |k| ≤ 22 in one correctly rounded Double operation;
    /// on x86-64, up to 19 digits and |k| ≤ 27 in one Float80 operation, kept unless
    /// it lands exactly on a halfway point between two Doubles (then the slow path
    /// decides, so the result is always the correctly rounded one).
    @inline(__always)
    func fastFloat<T: BinaryFloatingPoint>(_ start: Int, _ end: Int) -> T? {
        var i = start
        let base = input.base
        let negative = base[i] == ASCII.minus
        if negative { i += 1 }
        guard i < end else { return nil }
        var mantissa: UInt64 = 0
        var digits = 0
        if base[i] == ASCII.zero {
            i += 1
        } else {
            while i < end {
                let d = base[i] &- ASCII.zero
                guard d <= 9 else { break }
                mantissa = mantissa &* 10 &+ UInt64(d)
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
        }
        var exponent = 0
        if i < end, base[i] == ASCII.dot {
            i += 1
            let first = i
            while i < end {
                let d = base[i] &- ASCII.zero
                guard d <= 9 else { break }
                mantissa = mantissa &* 10 &+ UInt64(d)
                if mantissa != 0 { digits += 1 }
                i += 1
            }
            guard i > first else { return nil }
            exponent = first - i
        }
        if i < end {
            guard base[i] == ASCII.lowerE || base[i] == ASCII.upperE else { return nil }
            i += 1
            var negativeExponent = false
            if i < end, base[i] == ASCII.minus || base[i] == ASCII.plus { negativeExponent = base[i] == ASCII.minus; i += 1 }
            let first = i
            var e = 0
            while i < end {
                let d = base[i] &- ASCII.zero
                guard d <= 9, e < 10_000 else { return nil }
                e = e * 10 + Int(d)
                i += 1
            }
            guard i > first, i == end else { return nil }
            exponent += negativeExponent ? -e : e
        }
        guard digits <= 19 else { return nil }
        if mantissa == 0 {
            // Foundation's zero test has a quirk; a number it rejects takes the slow path.
            guard input.isTrueZero(start, end) else { return nil }
            return negative ? -T(0) : T(0)
        }
        if T.significandBitCount >= 52 {
            if digits <= 15, exponent >= -22, exponent <= 22 {
                var value = Double(mantissa)
                if exponent < 0 { value /= JSONInput.powers[-exponent] } else { value *= JSONInput.powers[exponent] }
                return T(negative ? -value : value)
            }
            #if arch(x86_64) && !os(Windows) && !os(Android)
            if exponent >= -27, exponent <= 27 {
                var wide = Float80(mantissa)
                if exponent < 0 { wide /= JSONInput.widePowers[-exponent] } else { wide *= JSONInput.widePowers[exponent] }
                // Exactly halfway between two Doubles (low 11 of 64 significand bits
                // 0b100_0000_0000): rounding again could be wrong; let strtod decide.
                if wide.significandBitPattern & 0x7FF == 0x400 { return nil }
                let value = Double(wide)
                return T(negative ? -value : value)
            }
            #endif
            return nil
        }
        guard digits <= 7, exponent >= -10, exponent <= 10 else { return nil }
        var value = T(mantissa)
        if exponent < 0 { value /= T(JSONInput.powers[-exponent]) } else { value *= T(JSONInput.powers[exponent]) }
        return negative ? -value : value
    }

    @inline(never)
    func slowFloat<T: BinaryFloatingPoint & LosslessStringConvertible>(_ type: T.Type, _ start: Int, _ end: Int) throws -> T {
        guard input.isValidNumber(start, end), let value = T(input.tokenString(start, end)) else { throw invalidJSON() }
        guard value.isFinite, value != 0 || input.isTrueZero(start, end) else { throw invalidJSON() }
        return value
    }

    func nonConforming<T: BinaryFloatingPoint>(_ p: Int, _ positiveInfinity: String, _ negativeInfinity: String, _ nan: String) -> T? {
        // Only strings without escapes or control characters, compared byte for byte.
        var i = p + 1
        while i < input.count {
            let c = input.base[i]
            if c == ASCII.quote { break }
            if c == ASCII.backslash || c < 0x20 { return nil }
            i += 1
        }
        let bytes = UnsafeRawBufferPointer(start: input.base + p + 1, count: i - p - 1)
        if positiveInfinity.utf8.elementsEqual(bytes) { return T.infinity }
        if negativeInfinity.utf8.elementsEqual(bytes) { return -T.infinity }
        if nan.utf8.elementsEqual(bytes) { return T.nan }
        return nil
    }

    // MARK: Any value

    /// Decodes a `T` at `p`, its path `node` + `key`.
    @inline(__always)
    func decodeValue<T: Decodable>(_ type: T.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) throws -> T {
        // Primitives and common collections reached through generic code (an array's or
        // a dictionary's elements, a generic wrapper) are read directly, as their own
        // `init(from:)` would read them, without a nested decoder round trip.
        if T.self == String.self { return unsafeBitCast(try decodeString(at: p, node, key), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try decodeInteger(Int.self, at: p, node, key), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try decodeFloat(Double.self, at: p, node, key), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try decodeBool(at: p, node, key), to: T.self) }
        if T.self == Date.self { return unsafeBitCast(try decodeDate(at: p, node, key), to: T.self) }
        if T.self == Data.self { return unsafeBitCast(try decodeData(at: p, node, key), to: T.self) }
        if T.self == URL.self { return unsafeBitCast(try decodeURL(at: p, node, key), to: T.self) }
        if T.self == Decimal.self { return unsafeBitCast(try decodeDecimal(at: p, node, key), to: T.self) }
        if T.self == Float.self { return unsafeBitCast(try decodeFloat(Float.self, at: p, node, key), to: T.self) }
        if T.self == Int64.self { return unsafeBitCast(try decodeInteger(Int64.self, at: p, node, key), to: T.self) }
        if T.self == UInt64.self { return unsafeBitCast(try decodeInteger(UInt64.self, at: p, node, key), to: T.self) }
        if T.self == Int32.self { return unsafeBitCast(try decodeInteger(Int32.self, at: p, node, key), to: T.self) }
        if T.self == UInt8.self { return unsafeBitCast(try decodeInteger(UInt8.self, at: p, node, key), to: T.self) }
        if T.self == [String].self { return unsafeBitCast(try decodeArray(String.self, at: p, node, key) { try $0.readString(at: $1) }, to: T.self) }
        if T.self == [Int].self { return unsafeBitCast(try decodeArray(Int.self, at: p, node, key) { try $0.readInteger(Int.self, at: $1) }, to: T.self) }
        if T.self == [Double].self { return unsafeBitCast(try decodeArray(Double.self, at: p, node, key) { try $0.readFloat(Double.self, at: $1) }, to: T.self) }
        if T.self == [String: String].self { return unsafeBitCast(try decodeStringDictionary(String.self, at: p, node, key), to: T.self) }
        if T.self == [String: Int].self { return unsafeBitCast(try decodeStringDictionary(Int.self, at: p, node, key), to: T.self) }
        if case .convertFromSnakeCase = options.keyDecodingStrategy, let dictionary = T.self as? any StringKeyedDictionaryMarker.Type {
            return try decodeRawKeyedDictionary(dictionary.valueType, at: p, node, key) as! T
        }
        let child = key.map { PathNode(parent: node, key: $0) } ?? node
        let value = try with(position: p, node: child) { try T(from: self) }
        lastEnd = -1
        return value
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
                throw DecodingError.dataCorrupted(DecodingError.Context(
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
                throw DecodingError.typeMismatch(String.self, DecodingError.Context(
                    codingPath: PathNode.path(node, key),
                    debugDescription: "Expected to decode \(String.self) but found \(describe(at: p)) instead."))
            }
            let string = try input.readString(p)
            lastEnd = -1
            guard let data = Data(base64Encoded: string) else {
                throw DecodingError.dataCorrupted(DecodingError.Context(
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
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: PathNode.path(node, key), debugDescription: "Invalid URL string."))
        }
        return url
    }

    func decodeDecimal(at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) throws -> Decimal {
        try checkNotNull(Decimal.self, at: p, node, key)
        let c = input.byte(p)
        guard c == ASCII.minus || (c >= ASCII.zero && c <= ASCII.nine) else {
            throw DecodingError.typeMismatch(Decimal.self, DecodingError.Context(codingPath: PathNode.path(node, key), debugDescription: ""))
        }
        let end = input.numberEnd(p)
        guard input.isValidNumber(p, end),
              let decimal = Decimal(string: input.tokenString(p, end), locale: Locale(identifier: "en_US_POSIX")),
              !decimal.isNaN else { throw invalidJSON() }
        lastEnd = end
        return decimal
    }

    /// An array of a primitive, read as `Array.init(from:)` reads it through an unkeyed
    /// container (same errors and paths; the path node is made only for an error).
    func decodeArray<E>(_ type: E.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?, _ read: (DecoderState, Int) throws -> E?) throws -> [E] {
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
                guard let element = try read(self, i) else { throw failure(E.self, at: i, arrayNode(), IndexKey(index)) }
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
    func decodeStringDictionary<V: Decodable>(_ type: V.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) throws -> [String: V] {
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
            let name = String(decoding: UnsafeBufferPointer(start: input.base + m[3 * j], count: m[3 * j + 1] - m[3 * j]), as: UTF8.self)
            result[name] = try decodeValue(V.self, at: m[3 * j + 2], dictionaryNode, StringKey(name))
        }
        lastEnd = -1
        return result
    }

    /// `[String: V]` under a key strategy: Foundation keeps such keys as they are.
    func decodeRawKeyedDictionary(_ valueType: any Decodable.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) throws -> [String: Any] {
        try checkNotNull([String: Any].self, at: p, node, key)
        guard input.byte(p) == ASCII.openBrace else {
            throw DecodingError.typeMismatch([String: Any].self, DecodingError.Context(
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

    private func decodeOpened<T: Decodable>(_ type: T.Type, at p: Int, _ node: PathNode?, _ key: StringKey) throws -> Any {
        try decodeValue(type, at: p, node, key)
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

    static let powers: [Double] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]
}
