import Foundation

struct DiffKey: CodingKey, Hashable {
    var stringValue: String
    var intValue: Int?
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

/// The shapes being decoded: `DiffGenerated.init(from:)` reads its shape from the top, a parent
/// pushes a child's shape before decoding it as a `DiffGenerated` and pops it after. Passed in
/// `userInfo` (so decoding also proves the decoder hands `userInfo` to every nested value).
final class ShapeStack: @unchecked Sendable {
    var shapes: [DiffShape]
    /// The coding path of every `DiffGenerated` value encoded or decoded, as the coder reported it.
    var paths: [String] = []
    init(_ shape: DiffShape) { shapes = [shape] }

    static func describe(_ path: [any CodingKey]) -> String {
        // An index or integer key by its number, whichever of intValue and stringValue holds it.
        path.map { key in
            key.intValue.map { "#\($0)" }
                ?? (Int(key.stringValue).map { "#\($0)" } ?? String(reflecting: key.stringValue))
        }.joined(separator: ".")
    }

    func with<R>(_ shape: DiffShape, _ body: () throws -> R) rethrows -> R {
        shapes.append(shape)
        defer { shapes.removeLast() }
        return try body()
    }
}

extension CodingUserInfoKey {
    static let diffShapes = CodingUserInfoKey(rawValue: "folio.differential.shapes")!
}

struct GeneratedError: Error, CustomStringConvertible {
    var description: String
}

/// A value of a run-time shape, `Codable` the way a synthesized conformance of the type the
/// shape describes would be.
struct DiffGenerated: Codable {
    var shape: DiffShape
    var value: DiffValue

    init(shape: DiffShape, value: DiffValue) {
        self.shape = shape
        self.value = value
    }

    func encode(to encoder: any Encoder) throws {
        if let stack = encoder.userInfo[.diffShapes] as? ShapeStack {
            stack.paths.append(ShapeStack.describe(encoder.codingPath))
        }
        try GeneratedCoding.encode(value, as: shape, to: encoder)
    }

    init(from decoder: any Decoder) throws {
        guard let stack = decoder.userInfo[.diffShapes] as? ShapeStack, let shape = stack.shapes.last else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "userInfo has no shape"))
        }
        self.shape = shape
        stack.paths.append(ShapeStack.describe(decoder.codingPath))
        value = try GeneratedCoding.decode(shape, from: decoder, stack)
    }
}

enum GeneratedCoding {
    static func mismatch(_ value: DiffValue, _ shape: DiffShape) -> GeneratedError {
        GeneratedError(description: "value \(value) is not of shape \(shape)")
    }

    // MARK: Encoding

    static func encode(_ value: DiffValue, as shape: DiffShape, to encoder: any Encoder) throws {
        switch (shape, value) {
        case (.optional(let inner), .some(let v)): try encode(v, as: inner, to: encoder)
        case (.optional, .none):
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        case (.array(let element, let mode), .array(let values)):
            var c = encoder.unkeyedContainer()
            try encodeElements(values, as: element, mode, into: &c)
        case (.stringDictionary(let element), .stringDictionary(let d)):
            var c = encoder.singleValueContainer()
            try c.encode(d.mapValues { DiffGenerated(shape: element, value: $0) })
        case (.intDictionary(let element), .intDictionary(let d)):
            var c = encoder.singleValueContainer()
            try c.encode(d.mapValues { DiffGenerated(shape: element, value: $0) })
        case (.structure(let fields), .structure(let values)):
            var c = encoder.container(keyedBy: DiffKey.self)
            try encodeFields(values, fields, into: &c)
        case (.enumeration(let cases), .enumeration(let index, let values)):
            var c = encoder.container(keyedBy: DiffKey.self)
            try encodeCase(index, values, cases, into: &c)
        default:
            var c = encoder.singleValueContainer()
            switch value {
            case .bool(let v): try c.encode(v)
            case .string(let v): try c.encode(v)
            case .int8(let v): try c.encode(v)
            case .int16(let v): try c.encode(v)
            case .int32(let v): try c.encode(v)
            case .int64(let v): try c.encode(v)
            case .int(let v): try c.encode(v)
            case .uint8(let v): try c.encode(v)
            case .uint16(let v): try c.encode(v)
            case .uint32(let v): try c.encode(v)
            case .uint64(let v): try c.encode(v)
            case .uint(let v): try c.encode(v)
            case .float(let v): try c.encode(v)
            case .double(let v): try c.encode(v)
            case .date(let v): try c.encode(v)
            case .data(let v): try c.encode(v)
            default: throw mismatch(value, shape)
            }
        }
    }

    /// Out of order: with an even number of fields (or elements), nested containers and
    /// super encoders are all opened first and filled afterwards, last first, as code that
    /// keeps a container and writes to it later does (a streaming encoder must cope).
    static func isOutOfOrder(_ count: Int) -> Bool { count >= 2 && count % 2 == 0 }

    static func encodeFields(
        _ values: [DiffValue], _ fields: [ShapeField], into c: inout KeyedEncodingContainer<DiffKey>
    ) throws {
        guard isOutOfOrder(fields.count) else {
            for (field, v) in zip(fields, values) {
                try encodeField(v, as: field.shape, field.mode, key: DiffKey(field.name), into: &c)
            }
            return
        }
        var later: [() throws -> Void] = []
        for (field, v) in zip(fields, values) {
            if let fill = openLater(v, field.shape, field.mode, key: DiffKey(field.name), in: &c) {
                later.append(fill)
            } else {
                try encodeField(v, as: field.shape, field.mode, key: DiffKey(field.name), into: &c)
            }
        }
        for fill in later.reversed() { try fill() }
    }

    static func encodeElements(
        _ values: [DiffValue], as element: DiffShape, _ mode: ChildMode, into c: inout any UnkeyedEncodingContainer
    ) throws {
        guard isOutOfOrder(values.count) else {
            for v in values { try encodeElement(v, as: element, mode, into: &c) }
            return
        }
        var later: [() throws -> Void] = []
        for v in values {
            if let fill = openLater(v, element, mode, in: &c) {
                later.append(fill)
            } else {
                try encodeElement(v, as: element, mode, into: &c)
            }
        }
        for fill in later.reversed() { try fill() }
    }

    /// Opens the container (or super encoder) for a compound child now and returns what
    /// fills it; nil for a child written at once.
    static func openLater(
        _ value: DiffValue, _ shape: DiffShape, _ mode: ChildMode, key: DiffKey,
        in c: inout KeyedEncodingContainer<DiffKey>
    ) -> (() throws -> Void)? {
        var shape = shape, value = value
        if case .optional(let inner) = shape {
            guard case .some(let v) = value else { return nil }
            shape = inner
            value = v
        }
        switch (mode, shape, value) {
        case (.superCoder, _, _):
            let sub = c.superEncoder(forKey: key)
            return { [shape, value] in try encode(value, as: shape, to: sub) }
        case (.direct, .array(let element, let m), .array(let values)):
            var n = c.nestedUnkeyedContainer(forKey: key)
            return { try encodeElements(values, as: element, m, into: &n) }
        case (.direct, .structure(let fields), .structure(let values)):
            var n = c.nestedContainer(keyedBy: DiffKey.self, forKey: key)
            return { try encodeFields(values, fields, into: &n) }
        case (.direct, .enumeration(let cases), .enumeration(let index, let values)):
            var n = c.nestedContainer(keyedBy: DiffKey.self, forKey: key)
            return { try encodeCase(index, values, cases, into: &n) }
        default: return nil
        }
    }

    static func openLater(
        _ value: DiffValue, _ shape: DiffShape, _ mode: ChildMode, in c: inout any UnkeyedEncodingContainer
    ) -> (() throws -> Void)? {
        var shape = shape, value = value
        if case .optional(let inner) = shape {
            guard case .some(let v) = value else { return nil }
            shape = inner
            value = v
        }
        // Not super encoders: Foundation puts a super encoder's value where the array ends
        // when it is filled, not where it was asked for, so the reference would be wrong.
        switch (mode, shape, value) {
        case (.direct, .array(let element, let m), .array(let values)):
            var n = c.nestedUnkeyedContainer()
            return { try encodeElements(values, as: element, m, into: &n) }
        case (.direct, .structure(let fields), .structure(let values)):
            var n = c.nestedContainer(keyedBy: DiffKey.self)
            return { try encodeFields(values, fields, into: &n) }
        case (.direct, .enumeration(let cases), .enumeration(let index, let values)):
            var n = c.nestedContainer(keyedBy: DiffKey.self)
            return { try encodeCase(index, values, cases, into: &n) }
        default: return nil
        }
    }

    /// `{"caseName":{"_0":...,"label":...}}`, as synthesized `Codable` writes an enum case.
    static func encodeCase(
        _ index: Int, _ values: [DiffValue], _ cases: [ShapeCase], into c: inout KeyedEncodingContainer<DiffKey>
    ) throws {
        let theCase = cases[index]
        var n = c.nestedContainer(keyedBy: DiffKey.self, forKey: DiffKey(theCase.name))
        for (i, v) in values.enumerated() {
            try encodeField(v, as: theCase.fields[i].shape, .boxed, key: DiffKey(theCase.key(i)), into: &n)
        }
    }

    static func encodeField(
        _ value: DiffValue, as shape: DiffShape, _ mode: ChildMode, key: DiffKey,
        into c: inout KeyedEncodingContainer<DiffKey>
    ) throws {
        if case .optional(let inner) = shape {
            switch (value, mode) {
            case (.none, .direct): return  // omitted, as `encodeIfPresent`
            case (.none, .boxed): try c.encodeIfPresent(nil as DiffGenerated?, forKey: key)
            case (.none, .superCoder):
                var s = c.superEncoder(forKey: key).singleValueContainer()
                try s.encodeNil()
            case (.some(let v), _): try encodeField(v, as: inner, mode, key: key, into: &c)
            default: throw mismatch(value, shape)
            }
            return
        }
        switch mode {
        case .boxed: try c.encode(DiffGenerated(shape: shape, value: value), forKey: key)
        case .superCoder: try encode(value, as: shape, to: c.superEncoder(forKey: key))
        case .direct:
            switch (shape, value) {
            case (.array(let element, let m), .array(let values)):
                var n = c.nestedUnkeyedContainer(forKey: key)
                try encodeElements(values, as: element, m, into: &n)
            case (.stringDictionary(let element), .stringDictionary(let d)):
                try c.encode(d.mapValues { DiffGenerated(shape: element, value: $0) }, forKey: key)
            case (.intDictionary(let element), .intDictionary(let d)):
                try c.encode(d.mapValues { DiffGenerated(shape: element, value: $0) }, forKey: key)
            case (.structure(let fields), .structure(let values)):
                var n = c.nestedContainer(keyedBy: DiffKey.self, forKey: key)
                try encodeFields(values, fields, into: &n)
            case (.enumeration(let cases), .enumeration(let index, let values)):
                var n = c.nestedContainer(keyedBy: DiffKey.self, forKey: key)
                try encodeCase(index, values, cases, into: &n)
            default:
                switch value {
                case .bool(let v): try c.encode(v, forKey: key)
                case .string(let v): try c.encode(v, forKey: key)
                case .int8(let v): try c.encode(v, forKey: key)
                case .int16(let v): try c.encode(v, forKey: key)
                case .int32(let v): try c.encode(v, forKey: key)
                case .int64(let v): try c.encode(v, forKey: key)
                case .int(let v): try c.encode(v, forKey: key)
                case .uint8(let v): try c.encode(v, forKey: key)
                case .uint16(let v): try c.encode(v, forKey: key)
                case .uint32(let v): try c.encode(v, forKey: key)
                case .uint64(let v): try c.encode(v, forKey: key)
                case .uint(let v): try c.encode(v, forKey: key)
                case .float(let v): try c.encode(v, forKey: key)
                case .double(let v): try c.encode(v, forKey: key)
                case .date(let v): try c.encode(v, forKey: key)
                case .data(let v): try c.encode(v, forKey: key)
                default: throw mismatch(value, shape)
                }
            }
        }
    }

    static func encodeElement(
        _ value: DiffValue, as shape: DiffShape, _ mode: ChildMode, into c: inout any UnkeyedEncodingContainer
    ) throws {
        if case .optional(let inner) = shape {
            switch (value, mode) {
            case (.none, .direct): try c.encodeNil()
            case (.none, .boxed): try c.encode(nil as DiffGenerated?)
            case (.none, .superCoder):
                var s = c.superEncoder().singleValueContainer()
                try s.encodeNil()
            case (.some(let v), _): try encodeElement(v, as: inner, mode, into: &c)
            default: throw mismatch(value, shape)
            }
            return
        }
        switch mode {
        case .boxed: try c.encode(DiffGenerated(shape: shape, value: value))
        case .superCoder: try encode(value, as: shape, to: c.superEncoder())
        case .direct:
            switch (shape, value) {
            case (.array(let element, let m), .array(let values)):
                var n = c.nestedUnkeyedContainer()
                try encodeElements(values, as: element, m, into: &n)
            case (.stringDictionary(let element), .stringDictionary(let d)):
                try c.encode(d.mapValues { DiffGenerated(shape: element, value: $0) })
            case (.intDictionary(let element), .intDictionary(let d)):
                try c.encode(d.mapValues { DiffGenerated(shape: element, value: $0) })
            case (.structure(let fields), .structure(let values)):
                var n = c.nestedContainer(keyedBy: DiffKey.self)
                try encodeFields(values, fields, into: &n)
            case (.enumeration(let cases), .enumeration(let index, let values)):
                var n = c.nestedContainer(keyedBy: DiffKey.self)
                try encodeCase(index, values, cases, into: &n)
            default:
                switch value {
                case .bool(let v): try c.encode(v)
                case .string(let v): try c.encode(v)
                case .int8(let v): try c.encode(v)
                case .int16(let v): try c.encode(v)
                case .int32(let v): try c.encode(v)
                case .int64(let v): try c.encode(v)
                case .int(let v): try c.encode(v)
                case .uint8(let v): try c.encode(v)
                case .uint16(let v): try c.encode(v)
                case .uint32(let v): try c.encode(v)
                case .uint64(let v): try c.encode(v)
                case .uint(let v): try c.encode(v)
                case .float(let v): try c.encode(v)
                case .double(let v): try c.encode(v)
                case .date(let v): try c.encode(v)
                case .data(let v): try c.encode(v)
                default: throw mismatch(value, shape)
                }
            }
        }
    }

    // MARK: Decoding

    static func decode(_ shape: DiffShape, from decoder: any Decoder, _ stack: ShapeStack) throws -> DiffValue {
        switch shape {
        case .optional(let inner):
            let c = try decoder.singleValueContainer()
            return try c.decodeNil() ? .none : .some(decode(inner, from: decoder, stack))
        case .array(let element, let mode):
            var c = try decoder.unkeyedContainer()
            return .array(try decodeElements(element, mode, &c, stack))
        case .stringDictionary(let element):
            let c = try decoder.singleValueContainer()
            return .stringDictionary(
                try stack.with(element) { try c.decode([String: DiffGenerated].self) }.mapValues(\.value))
        case .intDictionary(let element):
            let c = try decoder.singleValueContainer()
            return .intDictionary(
                try stack.with(element) { try c.decode([Int: DiffGenerated].self) }.mapValues(\.value))
        case .structure(let fields):
            return try decodeFields(fields, try decoder.container(keyedBy: DiffKey.self), stack)
        case .enumeration(let cases):
            return try decodeCase(cases, try decoder.container(keyedBy: DiffKey.self), stack)
        default:
            let c = try decoder.singleValueContainer()
            switch shape {
            case .bool: return .bool(try c.decode(Bool.self))
            case .string: return .string(try c.decode(String.self))
            case .int8: return .int8(try c.decode(Int8.self))
            case .int16: return .int16(try c.decode(Int16.self))
            case .int32: return .int32(try c.decode(Int32.self))
            case .int64: return .int64(try c.decode(Int64.self))
            case .int: return .int(try c.decode(Int.self))
            case .uint8: return .uint8(try c.decode(UInt8.self))
            case .uint16: return .uint16(try c.decode(UInt16.self))
            case .uint32: return .uint32(try c.decode(UInt32.self))
            case .uint64: return .uint64(try c.decode(UInt64.self))
            case .uint: return .uint(try c.decode(UInt.self))
            case .float: return .float(try c.decode(Float.self))
            case .double: return .double(try c.decode(Double.self))
            case .date: return .date(try c.decode(Date.self))
            case .data: return .data(try c.decode(Data.self))
            default: throw GeneratedError(description: "unreachable \(shape)")
            }
        }
    }

    static func decodeElements(
        _ element: DiffShape, _ mode: ChildMode, _ c: inout any UnkeyedDecodingContainer, _ stack: ShapeStack
    ) throws -> [DiffValue] {
        var values: [DiffValue] = []
        while !c.isAtEnd {
            let before = c.currentIndex
            values.append(try decodeElement(element, mode, &c, stack))
            // A container that does not move on would loop forever: fail instead.
            guard c.currentIndex > before else {
                throw GeneratedError(description: "unkeyed container did not advance at index \(before)")
            }
        }
        return values
    }

    static func decodeFields(
        _ fields: [ShapeField], _ c: KeyedDecodingContainer<DiffKey>, _ stack: ShapeStack
    ) throws -> DiffValue {
        .structure(try fields.map { try decodeField($0.shape, $0.mode, key: DiffKey($0.name), c, stack) })
    }

    static func decodeCase(
        _ cases: [ShapeCase], _ c: KeyedDecodingContainer<DiffKey>, _ stack: ShapeStack
    ) throws -> DiffValue {
        let keys = c.allKeys
        guard keys.count == 1 else {
            throw DecodingError.typeMismatch(
                DiffGenerated.self,
                .init(codingPath: c.codingPath, debugDescription: "\(keys.count) keys for an enum case"))
        }
        guard
            let index = cases.firstIndex(where: {
                $0.name.unicodeScalars.elementsEqual(keys[0].stringValue.unicodeScalars)
            })
        else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: c.codingPath, debugDescription: "no case \(keys[0].stringValue)"))
        }
        let n = try c.nestedContainer(keyedBy: DiffKey.self, forKey: keys[0])
        let theCase = cases[index]
        return .enumeration(
            index,
            try theCase.fields.indices.map { i in
                try decodeField(theCase.fields[i].shape, .boxed, key: DiffKey(theCase.key(i)), n, stack)
            })
    }

    static func decodeField(
        _ shape: DiffShape, _ mode: ChildMode, key: DiffKey, _ c: KeyedDecodingContainer<DiffKey>, _ stack: ShapeStack
    ) throws -> DiffValue {
        if case .optional(let inner) = shape {
            switch mode {
            case .direct:
                if try !c.contains(key) || c.decodeNil(forKey: key) { return .none }
                return .some(try decodeField(inner, mode, key: key, c, stack))
            case .boxed:
                return try stack.with(inner) { try c.decodeIfPresent(DiffGenerated.self, forKey: key) }.map {
                    .some($0.value)
                } ?? .none
            case .superCoder:
                return try decode(shape, from: c.superDecoder(forKey: key), stack)
            }
        }
        switch mode {
        case .boxed: return try stack.with(shape) { try c.decode(DiffGenerated.self, forKey: key) }.value
        case .superCoder: return try decode(shape, from: c.superDecoder(forKey: key), stack)
        case .direct:
            switch shape {
            case .array(let element, let m):
                var n = try c.nestedUnkeyedContainer(forKey: key)
                return .array(try decodeElements(element, m, &n, stack))
            case .stringDictionary(let element):
                return .stringDictionary(
                    try stack.with(element) { try c.decode([String: DiffGenerated].self, forKey: key) }.mapValues(
                        \.value))
            case .intDictionary(let element):
                return .intDictionary(
                    try stack.with(element) { try c.decode([Int: DiffGenerated].self, forKey: key) }.mapValues(\.value))
            case .structure(let fields):
                return try decodeFields(fields, try c.nestedContainer(keyedBy: DiffKey.self, forKey: key), stack)
            case .enumeration(let cases):
                return try decodeCase(cases, try c.nestedContainer(keyedBy: DiffKey.self, forKey: key), stack)
            case .bool: return .bool(try c.decode(Bool.self, forKey: key))
            case .string: return .string(try c.decode(String.self, forKey: key))
            case .int8: return .int8(try c.decode(Int8.self, forKey: key))
            case .int16: return .int16(try c.decode(Int16.self, forKey: key))
            case .int32: return .int32(try c.decode(Int32.self, forKey: key))
            case .int64: return .int64(try c.decode(Int64.self, forKey: key))
            case .int: return .int(try c.decode(Int.self, forKey: key))
            case .uint8: return .uint8(try c.decode(UInt8.self, forKey: key))
            case .uint16: return .uint16(try c.decode(UInt16.self, forKey: key))
            case .uint32: return .uint32(try c.decode(UInt32.self, forKey: key))
            case .uint64: return .uint64(try c.decode(UInt64.self, forKey: key))
            case .uint: return .uint(try c.decode(UInt.self, forKey: key))
            case .float: return .float(try c.decode(Float.self, forKey: key))
            case .double: return .double(try c.decode(Double.self, forKey: key))
            case .date: return .date(try c.decode(Date.self, forKey: key))
            case .data: return .data(try c.decode(Data.self, forKey: key))
            case .optional: throw GeneratedError(description: "unreachable")
            }
        }
    }

    static func decodeElement(
        _ shape: DiffShape, _ mode: ChildMode, _ c: inout any UnkeyedDecodingContainer, _ stack: ShapeStack
    ) throws -> DiffValue {
        if case .optional(let inner) = shape {
            switch mode {
            case .direct:
                if try c.decodeNil() { return .none }
                return .some(try decodeElement(inner, mode, &c, stack))
            case .boxed:
                return try stack.with(inner) { try c.decodeIfPresent(DiffGenerated.self) }.map { .some($0.value) }
                    ?? .none
            case .superCoder:
                return try decode(shape, from: c.superDecoder(), stack)
            }
        }
        switch mode {
        case .boxed: return try stack.with(shape) { try c.decode(DiffGenerated.self) }.value
        case .superCoder: return try decode(shape, from: c.superDecoder(), stack)
        case .direct:
            switch shape {
            case .array(let element, let m):
                var n = try c.nestedUnkeyedContainer()
                return .array(try decodeElements(element, m, &n, stack))
            case .stringDictionary(let element):
                return .stringDictionary(
                    try stack.with(element) { try c.decode([String: DiffGenerated].self) }.mapValues(\.value))
            case .intDictionary(let element):
                return .intDictionary(
                    try stack.with(element) { try c.decode([Int: DiffGenerated].self) }.mapValues(\.value))
            case .structure(let fields):
                return try decodeFields(fields, try c.nestedContainer(keyedBy: DiffKey.self), stack)
            case .enumeration(let cases):
                return try decodeCase(cases, try c.nestedContainer(keyedBy: DiffKey.self), stack)
            case .bool: return .bool(try c.decode(Bool.self))
            case .string: return .string(try c.decode(String.self))
            case .int8: return .int8(try c.decode(Int8.self))
            case .int16: return .int16(try c.decode(Int16.self))
            case .int32: return .int32(try c.decode(Int32.self))
            case .int64: return .int64(try c.decode(Int64.self))
            case .int: return .int(try c.decode(Int.self))
            case .uint8: return .uint8(try c.decode(UInt8.self))
            case .uint16: return .uint16(try c.decode(UInt16.self))
            case .uint32: return .uint32(try c.decode(UInt32.self))
            case .uint64: return .uint64(try c.decode(UInt64.self))
            case .uint: return .uint(try c.decode(UInt.self))
            case .float: return .float(try c.decode(Float.self))
            case .double: return .double(try c.decode(Double.self))
            case .date: return .date(try c.decode(Date.self))
            case .data: return .data(try c.decode(Data.self))
            case .optional: throw GeneratedError(description: "unreachable")
            }
        }
    }
}
