import Foundation

/// The `Encoder` a value's `encode(to:)` receives from the streaming encoder: one value
/// position (frame) of the output. Three words, so it fits an existential unboxed.
struct StreamEncoder: Encoder {
    let state: EncodingState
    let index: Int
    let serial: Int

    var codingPath: [any CodingKey] { state.codingPath(index, serial) }
    var userInfo: [CodingUserInfoKey: Any] { state.options.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if state.ensureTop(index, serial) {
            switch state.frames[index].kind {
            case .empty:
                state.out.put(UInt8(ascii: "{"))
                state.frames[index].kind = .keyed
            case .keyed:
                // Asked again (a subclass and its superclass sharing one encoder): the
                // same object, keys appended.
                break
            case .unkeyed, .single:
                state.failed = true
            }
        }
        return KeyedEncodingContainer(StreamKeyedContainer<Key>(state: state, index: index, serial: serial))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if state.ensureTop(index, serial) {
            switch state.frames[index].kind {
            case .empty:
                state.out.put(UInt8(ascii: "["))
                state.frames[index].kind = .unkeyed
            case .unkeyed:
                break
            case .keyed, .single:
                state.failed = true
            }
        }
        return StreamUnkeyedContainer(state: state, index: index, serial: serial)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        StreamSingleValueContainer(state: state, index: index, serial: serial)
    }
}

struct StreamKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let state: EncodingState
    let index: Int
    let serial: Int

    var codingPath: [any CodingKey] { state.codingPath(index, serial) }

    @inline(__always)
    private func begin(_ key: Key) -> Bool {
        guard state.ensureTop(index, serial) else { return false }
        state.writeKey(key)
        return true
    }

    mutating func encodeNil(forKey key: Key) throws { if begin(key) { state.out.putNull() } }
    mutating func encode(_ value: Bool, forKey key: Key) throws { if begin(key) { state.out.putBool(value) } }
    mutating func encode(_ value: String, forKey key: Key) throws { if begin(key) { state.out.putString(value) } }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        if begin(key) { try state.putDouble(value, key: .key(key)) }
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        if begin(key) { try state.putFloat(value, key: .key(key)) }
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { if begin(key) { state.out.putSigned(Int64(value)) } }
    mutating func encode(_ value: Int8, forKey key: Key) throws { if begin(key) { state.out.putSigned(Int64(value)) } }
    mutating func encode(_ value: Int16, forKey key: Key) throws { if begin(key) { state.out.putSigned(Int64(value)) } }
    mutating func encode(_ value: Int32, forKey key: Key) throws { if begin(key) { state.out.putSigned(Int64(value)) } }
    mutating func encode(_ value: Int64, forKey key: Key) throws { if begin(key) { state.out.putSigned(value) } }
    mutating func encode(_ value: Int128, forKey key: Key) throws { if begin(key) { state.out.putSigned128(value) } }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        if begin(key) { state.out.putUnsigned(UInt64(value)) }
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws {
        if begin(key) { state.out.putUnsigned(UInt64(value)) }
    }
    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        if begin(key) { state.out.putUnsigned(UInt64(value)) }
    }
    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        if begin(key) { state.out.putUnsigned(UInt64(value)) }
    }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { if begin(key) { state.out.putUnsigned(value) } }
    mutating func encode(_ value: UInt128, forKey key: Key) throws { if begin(key) { state.out.putUnsigned128(value) } }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        if begin(key) { try state.encodeValue(value, key: .key(key)) }
    }

    // The standard library's `encodeIfPresent` defaults call `encode`, so they need no
    // overrides: nil is skipped, a value is written as above.

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        guard begin(key) else {
            return KeyedEncodingContainer(StreamKeyedContainer<NestedKey>(state: state, index: .max, serial: -2))
        }
        state.out.put(UInt8(ascii: "{"))
        let (nestedIndex, nestedSerial) = state.push(.keyed, .key(key))
        return KeyedEncodingContainer(
            StreamKeyedContainer<NestedKey>(state: state, index: nestedIndex, serial: nestedSerial))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        guard begin(key) else { return StreamUnkeyedContainer(state: state, index: .max, serial: -2) }
        state.out.put(UInt8(ascii: "["))
        let (nestedIndex, nestedSerial) = state.push(.unkeyed, .key(key))
        return StreamUnkeyedContainer(state: state, index: nestedIndex, serial: nestedSerial)
    }

    mutating func superEncoder() -> any Encoder {
        guard state.ensureTop(index, serial) else { return StreamEncoder(state: state, index: .max, serial: -2) }
        state.writeKey(FolioJSONKey.superKey)
        let (nestedIndex, nestedSerial) = state.push(.empty, .superKey)
        return StreamEncoder(state: state, index: nestedIndex, serial: nestedSerial)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        guard begin(key) else { return StreamEncoder(state: state, index: .max, serial: -2) }
        let (nestedIndex, nestedSerial) = state.push(.empty, .key(key))
        return StreamEncoder(state: state, index: nestedIndex, serial: nestedSerial)
    }
}

struct StreamUnkeyedContainer: UnkeyedEncodingContainer {
    let state: EncodingState
    let index: Int
    let serial: Int

    var codingPath: [any CodingKey] { state.codingPath(index, serial) }
    var count: Int { state.elementCount(index, serial) }

    /// Starts the next element; returns its index, or nil if this array is closed.
    @inline(__always)
    private func begin() -> Int? {
        guard state.ensureTop(index, serial) else { return nil }
        let element = state.topCount
        state.beginEntry()
        return element
    }

    mutating func encodeNil() throws { if begin() != nil { state.out.putNull() } }
    mutating func encode(_ value: Bool) throws { if begin() != nil { state.out.putBool(value) } }
    mutating func encode(_ value: String) throws { if begin() != nil { state.out.putString(value) } }
    mutating func encode(_ value: Double) throws {
        if let element = begin() { try state.putDouble(value, key: .index(element)) }
    }
    mutating func encode(_ value: Float) throws {
        if let element = begin() { try state.putFloat(value, key: .index(element)) }
    }
    mutating func encode(_ value: Int) throws { if begin() != nil { state.out.putSigned(Int64(value)) } }
    mutating func encode(_ value: Int8) throws { if begin() != nil { state.out.putSigned(Int64(value)) } }
    mutating func encode(_ value: Int16) throws { if begin() != nil { state.out.putSigned(Int64(value)) } }
    mutating func encode(_ value: Int32) throws { if begin() != nil { state.out.putSigned(Int64(value)) } }
    mutating func encode(_ value: Int64) throws { if begin() != nil { state.out.putSigned(value) } }
    mutating func encode(_ value: Int128) throws { if begin() != nil { state.out.putSigned128(value) } }
    mutating func encode(_ value: UInt) throws { if begin() != nil { state.out.putUnsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt8) throws { if begin() != nil { state.out.putUnsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt16) throws { if begin() != nil { state.out.putUnsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt32) throws { if begin() != nil { state.out.putUnsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt64) throws { if begin() != nil { state.out.putUnsigned(value) } }
    mutating func encode(_ value: UInt128) throws { if begin() != nil { state.out.putUnsigned128(value) } }

    mutating func encode<T: Encodable>(_ value: T) throws {
        if let element = begin() { try state.encodeValue(value, key: .index(element)) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        guard let element = begin() else {
            return KeyedEncodingContainer(StreamKeyedContainer<NestedKey>(state: state, index: .max, serial: -2))
        }
        state.out.put(UInt8(ascii: "{"))
        let (nestedIndex, nestedSerial) = state.push(.keyed, .index(element))
        return KeyedEncodingContainer(
            StreamKeyedContainer<NestedKey>(state: state, index: nestedIndex, serial: nestedSerial))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        guard let element = begin() else { return StreamUnkeyedContainer(state: state, index: .max, serial: -2) }
        state.out.put(UInt8(ascii: "["))
        let (nestedIndex, nestedSerial) = state.push(.unkeyed, .index(element))
        return StreamUnkeyedContainer(state: state, index: nestedIndex, serial: nestedSerial)
    }

    mutating func superEncoder() -> any Encoder {
        guard let element = begin() else { return StreamEncoder(state: state, index: .max, serial: -2) }
        let (nestedIndex, nestedSerial) = state.push(.empty, .index(element))
        return StreamEncoder(state: state, index: nestedIndex, serial: nestedSerial)
    }
}

struct StreamSingleValueContainer: SingleValueEncodingContainer {
    let state: EncodingState
    let index: Int
    let serial: Int

    var codingPath: [any CodingKey] { state.codingPath(index, serial) }

    /// Claims the position for one value; false if it is closed or already holds one
    /// (Foundation stops the program there; this encoder leaves it to the tree encoder,
    /// where the last value wins).
    @inline(__always)
    private func begin() -> Bool {
        guard state.ensureTop(index, serial) else { return false }
        guard state.frames[index].kind == .empty else {
            state.failed = true
            return false
        }
        state.frames[index].kind = .single
        return true
    }

    mutating func encodeNil() throws { if begin() { state.out.putNull() } }
    mutating func encode(_ value: Bool) throws { if begin() { state.out.putBool(value) } }
    mutating func encode(_ value: String) throws { if begin() { state.out.putString(value) } }
    mutating func encode(_ value: Double) throws { if begin() { try state.putDouble(value, key: .none) } }
    mutating func encode(_ value: Float) throws { if begin() { try state.putFloat(value, key: .none) } }
    mutating func encode(_ value: Int) throws { if begin() { state.out.putSigned(Int64(value)) } }
    mutating func encode(_ value: Int8) throws { if begin() { state.out.putSigned(Int64(value)) } }
    mutating func encode(_ value: Int16) throws { if begin() { state.out.putSigned(Int64(value)) } }
    mutating func encode(_ value: Int32) throws { if begin() { state.out.putSigned(Int64(value)) } }
    mutating func encode(_ value: Int64) throws { if begin() { state.out.putSigned(value) } }
    mutating func encode(_ value: Int128) throws { if begin() { state.out.putSigned128(value) } }
    mutating func encode(_ value: UInt) throws { if begin() { state.out.putUnsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt8) throws { if begin() { state.out.putUnsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt16) throws { if begin() { state.out.putUnsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt32) throws { if begin() { state.out.putUnsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt64) throws { if begin() { state.out.putUnsigned(value) } }
    mutating func encode(_ value: UInt128) throws { if begin() { state.out.putUnsigned128(value) } }

    mutating func encode<T: Encodable>(_ value: T) throws {
        guard begin() else { return }
        if try state.encodeDirect(value, key: .none) { return }
        // The value's own containers take this position (as Foundation, which hands it
        // this same encoder).
        state.frames[index].kind = .empty
        do {
            try value.encode(to: StreamEncoder(state: state, index: index, serial: serial))
        } catch {
            state.failed = true
            throw error
        }
        guard state.isOpen(index, serial) else { state.failed = true; return }
        if state.frames[index].kind == .empty {
            // Wrote nothing: an empty object, and the position is taken.
            state.out.put(UInt8(ascii: "{"), UInt8(ascii: "}"))
            state.frames[index].kind = .single
        }
    }
}
