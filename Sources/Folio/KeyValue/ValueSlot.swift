/// What the key-value store knows of one key: its stored bytes (nil: no value), and the
/// value decoded from them or set, with its type, so that a read of the same type does not
/// decode again.
struct ValueSlot: Sendable {
    /// The stored value (layout byte and JSON, Docs/Format.md §25), or nil if the key has none.
    let bytes: [UInt8]?
    /// `bytes` decoded as, or the value set of, type `type`.
    let decoded: (any Sendable)?
    let type: ObjectIdentifier?

    static let absent = ValueSlot(bytes: nil, decoded: nil, type: nil)

    init(bytes: [UInt8]?, decoded: (any Sendable)?, type: ObjectIdentifier?) {
        self.bytes = bytes
        self.decoded = decoded
        self.type = type
    }

    /// `bytes`, with `value` kept beside them unless it is an object: a class instance is
    /// never shared between reads (a caller may change the object it was given; every read
    /// decodes its own, as the record cache does, Docs/Cache.md §7.1).
    init<Value: Sendable>(bytes: [UInt8], decoded value: Value) {
        if Value.self is AnyObject.Type {
            self.init(bytes: bytes, decoded: nil, type: nil)
        } else {
            self.init(bytes: bytes, decoded: value, type: ObjectIdentifier(Value.self))
        }
    }

    /// The value, as `Value`: nil if there is none; decoded from the bytes unless it was
    /// decoded (or set) as that type already.
    func value<Value: Decodable>(as _: Value.Type, key name: String) throws(FolioError) -> Value? {
        guard let bytes else { return nil }
        if type == ObjectIdentifier(Value.self), let decoded = decoded as? Value { return decoded }
        return try KeyValueLayout.decode(Value.self, from: bytes, key: name)
    }

    /// The memory it is counted as in a cache: its bytes (the decoded value is in proportion).
    var cost: Int { bytes?.count ?? 0 }
}
