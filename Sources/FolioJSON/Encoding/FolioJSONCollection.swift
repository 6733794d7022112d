import Foundation

/// Arrays, `[String: V]` and `[Int: V]` are written by the encoder itself, without
/// containers. Dictionary keys as they are (no key strategy, as Foundation), in sorted
/// order so equal dictionaries always give the same bytes.
protocol FolioJSONCollection {
    func folioWrite(into state: EncodingState) throws -> Bool
    /// How the tree encoder orders this dictionary's keys, or nil if it is not written
    /// as an object with raw keys.
    static var folioKeyOrder: TreeKeyOrder? { get }
}

extension Dictionary: FolioJSONCollection where Key: Encodable, Value: Encodable {
    static var folioKeyOrder: TreeKeyOrder? {
        if Key.self == String.self { return .string }
        if Key.self == Int.self { return .int }
        return nil
    }

    func folioWrite(into state: EncodingState) throws -> Bool {
        if Key.self == String.self {
            // The keys sorted on their own (a concrete `[String]` sort), each value looked up:
            // sorting (key, value) pairs is generic over `Value` and cost most of the write.
            // The `Int` branch below repeats this on purpose: one function generic over the
            // key type is not specialized here and made the nested benchmark 2.5x slower.
            let dictionary = unsafeBitCast(self, to: [String: Value].self)
            var keys = [String]()
            keys.reserveCapacity(dictionary.count)
            for key in dictionary.keys { keys.append(key) }
            if keys.count > 1 { keys.sort() }
            state.out.put(UInt8(ascii: "{"))
            var first = true
            for key in keys {
                if first { first = false } else { state.out.put(UInt8(ascii: ",")) }
                state.out.putString(key)
                state.out.put(UInt8(ascii: ":"))
                try state.encodeValue(dictionary[key].unsafelyUnwrapped, key: .key(FolioJSONKey(stringValue: key)))
            }
            state.out.put(UInt8(ascii: "}"))
            return true
        }
        if Key.self == Int.self {
            let dictionary = unsafeBitCast(self, to: [Int: Value].self)
            var keys = [Int]()
            keys.reserveCapacity(dictionary.count)
            for key in dictionary.keys { keys.append(key) }
            if keys.count > 1 { keys.sort() }
            state.out.put(UInt8(ascii: "{"))
            var first = true
            for key in keys {
                if first { first = false } else { state.out.put(UInt8(ascii: ",")) }
                state.out.put(UInt8(ascii: "\""))
                state.out.putSigned(Int64(key))
                state.out.put(UInt8(ascii: "\""), UInt8(ascii: ":"))
                try state.encodeValue(dictionary[key].unsafelyUnwrapped, key: .key(FolioJSONKey(intValue: key)))
            }
            state.out.put(UInt8(ascii: "}"))
            return true
        }
        return false
    }
}

extension Array: FolioJSONCollection where Element: Encodable {
    static var folioKeyOrder: TreeKeyOrder? { nil }

    func folioWrite(into state: EncodingState) throws -> Bool {
        state.out.put(UInt8(ascii: "["))
        for index in indices {
            if index > 0 { state.out.put(UInt8(ascii: ",")) }
            try state.encodeValue(self[index], key: .index(index))
        }
        state.out.put(UInt8(ascii: "]"))
        return true
    }
}
