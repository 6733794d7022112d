import Foundation

/// Decodes `Decodable` values from JSON bytes, in place: no intermediate tree, no copy
/// of the input.
///
/// It reads any JSON that Foundation's `JSONEncoder` writes (with the matching
/// strategies), and any valid JSON (RFC 8259) besides. Malformed input, invalid UTF-8,
/// nesting deeper than ``maximumDepth`` and numbers that do not fit the requested type
/// are errors, never traps.
///
/// ```swift
/// let book = try FolioJSONDecoder().decode(Book.self, from: bytes)
/// ```
///
/// Errors are the standard library's `DecodingError`, as Foundation's decoder throws.
public struct FolioJSONDecoder: Sendable {
    /// How `Date` values are read.
    public enum DateDecodingStrategy: Sendable {
        /// `Date`'s own `Decodable` conformance: seconds since 2001-01-01 as a number.
        case deferredToDate
        /// Seconds since 1970-01-01 as a number.
        case secondsSince1970
        /// Milliseconds since 1970-01-01 as a number.
        case millisecondsSince1970
        /// An ISO 8601 string, such as `"2025-03-01T12:00:00Z"`.
        case iso8601
    }

    /// How `Data` values are read.
    public enum DataDecodingStrategy: Sendable {
        /// `Data`'s own `Decodable` conformance: an array of byte values.
        case deferredToData
        /// A base64 string.
        case base64
    }

    /// Which strings stand for infinite and not-a-number floating-point values.
    public enum NonConformingFloatDecodingStrategy: Sendable {
        /// None: such strings are a type mismatch.
        case `throw`
        /// These strings, as ``FolioJSONEncoder/NonConformingFloatEncodingStrategy/convertToString(positiveInfinity:negativeInfinity:nan:)`` writes them.
        case convertFromString(positiveInfinity: String, negativeInfinity: String, nan: String)
    }

    /// How the keys of JSON objects are matched to coding keys.
    public enum KeyDecodingStrategy: Sendable {
        /// Each key as it is.
        case useDefaultKeys
        /// `snake_case` keys read as `camelCase` (`"image_url"` matches `imageUrl`).
        case convertFromSnakeCase
    }

    /// How `Date` values are read. Default: ``DateDecodingStrategy/deferredToDate``.
    public var dateDecodingStrategy: DateDecodingStrategy = .deferredToDate
    /// How `Data` values are read. Default: ``DataDecodingStrategy/base64``.
    public var dataDecodingStrategy: DataDecodingStrategy = .base64
    /// Which strings stand for non-finite floats. Default: ``NonConformingFloatDecodingStrategy/throw``.
    public var nonConformingFloatDecodingStrategy: NonConformingFloatDecodingStrategy = .throw
    /// How keys are matched. Default: ``KeyDecodingStrategy/useDefaultKeys``.
    public var keyDecodingStrategy: KeyDecodingStrategy = .useDefaultKeys
    /// Values the decoded types can read from `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]
    /// The deepest nesting of arrays and objects accepted; deeper input is
    /// `DecodingError.dataCorrupted`. Default: 512, as Foundation's.
    public var maximumDepth: Int = 512

    /// A decoder with Foundation's default strategies.
    public init() {}

    /// Decodes a value of `type` from the UTF-8 JSON in `bytes`.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try bytes.withUnsafeBytes { try decode(type, from: $0) }
    }

    /// Decodes a value of `type` from the UTF-8 JSON in `bytes` (a record's payload is a
    /// slice of the page's bytes: no copy).
    public func decode<T: Decodable>(_ type: T.Type, from bytes: ArraySlice<UInt8>) throws -> T {
        try bytes.withUnsafeBytes { try decode(type, from: $0) }
    }

    /// Decodes a value of `type` from the UTF-8 JSON in `data`.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try data.withUnsafeBytes { try decode(type, from: $0) }
    }

    /// Decodes a value of `type` from the UTF-8 JSON in `buffer`, which must stay valid
    /// for the duration of the call only.
    public func decode<T: Decodable>(_ type: T.Type, from buffer: UnsafeRawBufferPointer) throws -> T {
        let input = JSONInput(buffer)
        let info: [CodingUserInfoKey: Any] = userInfo.isEmpty ? [:] : userInfo.mapValues { $0 as Any }
        // The member tables of ordinary records fit on the stack.
        return try withUnsafeTemporaryAllocation(of: Int.self, capacity: 128) { arena in
            let state = DecoderState(input: input, options: self, userInfo: info, position: 0, node: nil, arena: arena)
            let top = try input.validate(maximumDepth: maximumDepth, recorder: state)
            state.position = top
            return try state.decodeValue(type, at: top, nil, nil)
        }
    }
}
