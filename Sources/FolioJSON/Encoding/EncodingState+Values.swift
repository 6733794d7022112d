import Foundation

/// Values that have a JSON form of their own (floating point under the non-conforming
/// strategy, dates and data under their strategies), and the dispatch that writes the
/// standard types directly instead of through `Encodable`.
extension EncodingState {
    func putDouble(_ value: Double, key: PathKey) throws {
        if value.isFinite { out.putFinite(value); return }
        try putNonConforming(value, description: "Double", key: key)
    }

    func putFloat(_ value: Float, key: PathKey) throws {
        if value.isFinite { out.putFinite(value); return }
        try putNonConforming(value, description: "Float", key: key)
    }

    @inline(never)
    func putNonConforming<F: BinaryFloatingPoint & Encodable>(_ value: F, description: String, key: PathKey) throws {
        switch options.nonConformingFloat {
        case .convertToString(let positiveInfinity, let negativeInfinity, let nan):
            if value.isNaN {
                out.putString(nan)
            } else if value > 0 {
                out.putString(positiveInfinity)
            } else {
                out.putString(negativeInfinity)
            }
        case .throw:
            failed = true
            let name = value.isNaN ? "nan" : (value > 0 ? "inf" : "-inf")
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPathOfTop(adding: key),
                    debugDescription: "Unable to encode \(description).\(name) directly in JSON."))
        }
    }

    func putDate(_ date: Date, key: PathKey) throws {
        switch options.date {
        case .deferredToDate: try putDouble(date.timeIntervalSinceReferenceDate, key: key)
        case .secondsSince1970: try putDouble(date.timeIntervalSince1970, key: key)
        case .millisecondsSince1970: try putDouble(1000.0 * date.timeIntervalSince1970, key: key)
        case .iso8601: out.putISO8601(date)
        }
    }

    func putData(_ data: Data, key: PathKey) {
        switch options.data {
        case .base64: out.putBase64(data)
        case .deferredToData:
            // Data's own conformance: an array of its bytes.
            out.put(UInt8(ascii: "["))
            var first = true
            for byte in data {
                if first { first = false } else { out.put(UInt8(ascii: ",")) }
                out.putUnsigned(UInt64(byte))
            }
            out.put(UInt8(ascii: "]"))
        }
    }

    /// Writes `value` if it is a type written without its own `encode(to:)` (numbers,
    /// strings, `Date`, `Data`, `URL`, `Decimal`, `String`/`Int`-keyed dictionaries).
    @inline(__always)
    func encodeDirect<T: Encodable>(_ value: T, key: PathKey) throws -> Bool {
        if T.self == String.self { out.putString(unsafeBitCast(value, to: String.self)); return true }
        if T.self == Int.self { out.putSigned(Int64(unsafeBitCast(value, to: Int.self))); return true }
        if T.self == Double.self { try putDouble(unsafeBitCast(value, to: Double.self), key: key); return true }
        if T.self == Bool.self { out.putBool(unsafeBitCast(value, to: Bool.self)); return true }
        return try encodeDirectRare(value, key: key)
    }

    func encodeDirectRare<T: Encodable>(_ value: T, key: PathKey) throws -> Bool {
        if T.self == Date.self { try putDate(unsafeBitCast(value, to: Date.self), key: key); return true }
        if T.self == Float.self { try putFloat(unsafeBitCast(value, to: Float.self), key: key); return true }
        if T.self == Int64.self { out.putSigned(unsafeBitCast(value, to: Int64.self)); return true }
        if T.self == Int32.self { out.putSigned(Int64(unsafeBitCast(value, to: Int32.self))); return true }
        if T.self == Int16.self { out.putSigned(Int64(unsafeBitCast(value, to: Int16.self))); return true }
        if T.self == Int8.self { out.putSigned(Int64(unsafeBitCast(value, to: Int8.self))); return true }
        if T.self == UInt.self { out.putUnsigned(UInt64(unsafeBitCast(value, to: UInt.self))); return true }
        if T.self == UInt64.self { out.putUnsigned(unsafeBitCast(value, to: UInt64.self)); return true }
        if T.self == UInt32.self { out.putUnsigned(UInt64(unsafeBitCast(value, to: UInt32.self))); return true }
        if T.self == UInt16.self { out.putUnsigned(UInt64(unsafeBitCast(value, to: UInt16.self))); return true }
        if T.self == UInt8.self { out.putUnsigned(UInt64(unsafeBitCast(value, to: UInt8.self))); return true }
        if T.self == Data.self { putData(unsafeBitCast(value, to: Data.self), key: key); return true }
        if T.self == URL.self { out.putString(unsafeBitCast(value, to: URL.self).absoluteString); return true }
        if T.self == Decimal.self { out.putRaw(unsafeBitCast(value, to: Decimal.self).description); return true }
        if T.self == Int128.self { out.putSigned128(unsafeBitCast(value, to: Int128.self)); return true }
        if T.self == UInt128.self { out.putUnsigned128(unsafeBitCast(value, to: UInt128.self)); return true }
        // Arrays and dictionaries are one pointer wide: only then is the (slower) cast tried.
        if MemoryLayout<T>.size == MemoryLayout<[Int]>.size, let collection = value as? any FolioJSONCollection {
            let (index, serial) = push(.single, key)
            let written = try collection.folioWrite(into: self)
            if isOpen(index, serial) {
                while frames.count &- 1 > index { pop() }
                pop()
            } else {
                failed = true
            }
            return written
        }
        return false
    }

    /// Writes one JSON value for `value` at the current position (its key or comma
    /// already written). `key` is its coding key, for `codingPath`.
    func encodeValue<T: Encodable>(_ value: T, key: PathKey) throws {
        if try encodeDirect(value, key: key) { return }
        let (index, serial) = push(.empty, key)
        do {
            try value.encode(to: StreamEncoder(state: self, index: index, serial: serial))
        } catch {
            failed = true
            throw error
        }
        try finish(value, index, serial)
    }

    /// Closes the position `value` was encoded into.
    func finish<T>(_ value: T, _ index: Int, _ serial: Int) throws {
        guard isOpen(index, serial) else { failed = true; return }
        while frames.count &- 1 > index { pop() }
        if index == 0, isTopLevel, frames[0].kind == .empty {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: basePath,
                    debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        pop()
    }
}
