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
/// Errors are the standard library's `DecodingError`, as Foundation's decoder throws:
/// the same case at the same coding path for the same input, Foundation's quirks
/// included (trailing commas accepted, the first of duplicate keys wins, number and
/// string problems reported as `dataCorrupted` at the root path, values of members that
/// are never read not checked beyond their structure).
///
/// The decoder and the containers a type's `init(from:)` receives read the input in
/// place: they must not be kept and used after the decode returns.
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
    /// `DecodingError.dataCorrupted`. Default: ``defaultMaximumDepth`` (100; Foundation's
    /// decoder accepts 512).
    ///
    /// The limit is what keeps decoding from overflowing the calling thread's stack.
    /// Checking the input's nesting costs no stack, but decoding it does: each level is a
    /// nested `init(from:)` call, about 0.5 to 1.6 KiB of stack in an optimized build and
    /// 1 to 3.2 KiB in a debug build, the decoded type's own `init(from:)` included (a type
    /// with many properties costs the most). At the default that is at most about 160 KiB
    /// optimized and 320 KiB in a debug build, which fits the smallest stacks code commonly
    /// runs on (512 KiB: Apple platforms' secondary threads and concurrency pool threads)
    /// with room for the caller. Raise it only where every thread that decodes has the
    /// stack for it (Docs/JSON.md, "Nesting and the stack").
    public var maximumDepth: Int = FolioJSONDecoder.defaultMaximumDepth

    /// The default ``maximumDepth`` of the decoder and of ``FolioJSONEncoder``: 100 levels
    /// of arrays and objects.
    public static let defaultMaximumDepth = 100

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
    ///
    /// UTF-16 and UTF-32 input (with a byte order mark, or recognized by the zero bytes
    /// around its first ASCII characters, as RFC 4627 and Foundation do) is converted to
    /// UTF-8 first; UTF-8 is read in place.
    public func decode<T: Decodable>(_ type: T.Type, from buffer: UnsafeRawBufferPointer) throws -> T {
        if let (encoding, bomLength) = Self.nonUTF8Encoding(of: buffer) {
            guard var string = String(bytes: buffer.dropFirst(bomLength), encoding: encoding) else {
                throw invalidJSON()
            }
            return try string.withUTF8 { try decodeUTF8(type, from: UnsafeRawBufferPointer($0)) }
        }
        return try decodeUTF8(type, from: buffer)
    }

    /// The encoding of `bytes` and the length of its byte order mark when not UTF-8,
    /// by Foundation's rules.
    static func nonUTF8Encoding(of bytes: UnsafeRawBufferPointer) -> (String.Encoding, Int)? {
        let n = bytes.count
        guard n >= 2 else { return nil }
        let b0 = bytes[0], b1 = bytes[1]
        let b2: UInt8? = n > 2 ? bytes[2] : nil
        let b3: UInt8? = n > 3 ? bytes[3] : nil
        switch (b0, b1, b2, b3) {
        case (0, 0, 0xFE, 0xFF): return (.utf32BigEndian, 4)
        case (0xFE, 0xFF, 0, 0): return (.utf32LittleEndian, 4)
        case (0xFE, 0xFF, _, _): return (.utf16BigEndian, 2)
        case (0xFF, 0xFE, _, _): return (.utf16LittleEndian, 2)
        case (0xEF, 0xBB, 0xBF, _): return nil
        case (0, 0, 0, .some(let nz)) where nz != 0: return (.utf32BigEndian, 0)
        case (0, let nz1, 0, .some(let nz2)) where nz1 != 0 && nz2 != 0: return (.utf16BigEndian, 0)
        case (let nz, 0, 0, 0) where nz != 0: return (.utf32LittleEndian, 0)
        case (let nz1, 0, .some(let nz2), 0) where nz1 != 0 && nz2 != 0: return (.utf16LittleEndian, 0)
        case (0, let nz, nil, nil) where nz != 0: return (.utf16BigEndian, 0)
        case (let nz, 0, nil, nil) where nz != 0: return (.utf16LittleEndian, 0)
        default: return nil
        }
    }

    private func decodeUTF8<T: Decodable>(_ type: T.Type, from buffer: UnsafeRawBufferPointer) throws -> T {
        let input = JSONInput(buffer)
        let info: [CodingUserInfoKey: Any] = userInfo.isEmpty ? [:] : userInfo.mapValues { $0 as Any }
        // The calling thread's state of its previous decode, reused: a decode allocates no
        // decoder, session or member table of its own (ThreadDecoderState.swift).
        var state = ThreadDecoderState.take()
        state.begin(input: input, options: self, userInfo: info)
        // After this call the input is gone: any use of a decoder or container kept from it
        // stops with a clear message (DecoderState.input), and its state is not reused.
        defer { ThreadDecoderState.giveBack(&state) }
        let top = try input.validate(maximumDepth: maximumDepth, recorder: state)
        state.position = top
        return try state.decodeValue(type, at: top, nil, nil)
    }
}
