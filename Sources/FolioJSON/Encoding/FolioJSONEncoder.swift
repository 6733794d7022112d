import Foundation

/// Encodes `Encodable` values as JSON bytes, without Foundation's intermediate tree.
///
/// The output is JSON that Foundation's `JSONDecoder` reads to equal values. Every
/// strategy defaults to what Foundation's `JSONEncoder` does by default, so records
/// written with either coder are interchangeable.
///
/// ```swift
/// var encoder = FolioJSONEncoder()
/// encoder.dateEncodingStrategy = .millisecondsSince1970
/// let bytes = try encoder.encode(book)          // [UInt8], UTF-8 JSON
/// ```
///
/// Errors are the standard library's `EncodingError`, as Foundation's encoder throws.
///
/// Differences from Foundation's output, all still read by Foundation's decoder: the
/// JSON is compact with `/` unescaped; object keys come in the order they were encoded,
/// and `[String: V]` / `[Int: V]` dictionaries with sorted keys, so the same value always
/// gives the same bytes. A key encoded twice into one object (say, a subclass and its
/// superclass sharing an encoder and a key name) can appear twice, where Foundation's
/// encoder keeps only the last value (and Foundation's decoder reads the first). An array's `superEncoder()` takes the next element
/// position when it is asked for (Foundation inserts it when the super encoder is
/// released). Coding paths of values in nested containers include the nested
/// container's key, which Foundation's leave out.
///
/// Containers may be used in any order, as with Foundation. Values whose containers are
/// written one after another (all synthesized `Codable` conformances) are written straight
/// into the output; others are encoded again through a small tree, slower but the same JSON.
public struct FolioJSONEncoder: Sendable {
    /// How `Date` values are written.
    public enum DateEncodingStrategy: Sendable {
        /// `Date`'s own `Encodable` conformance: seconds since 2001-01-01 as a number.
        case deferredToDate
        /// Seconds since 1970-01-01 as a number.
        case secondsSince1970
        /// Milliseconds since 1970-01-01 as a number.
        case millisecondsSince1970
        /// An ISO 8601 string in UTC, such as `"2025-03-01T12:00:00Z"` (whole seconds).
        case iso8601
    }

    /// How `Data` values are written.
    public enum DataEncodingStrategy: Sendable {
        /// `Data`'s own `Encodable` conformance: an array of byte values.
        case deferredToData
        /// A base64 string.
        case base64
    }

    /// How infinite and not-a-number floating-point values are written; JSON has no
    /// number for them.
    public enum NonConformingFloatEncodingStrategy: Sendable {
        /// Refuse them with `EncodingError.invalidValue`.
        case `throw`
        /// Write them as these strings.
        case convertToString(positiveInfinity: String, negativeInfinity: String, nan: String)
    }

    /// How coding keys are written.
    public enum KeyEncodingStrategy: Sendable {
        /// Each key's `stringValue` as it is.
        case useDefaultKeys
        /// `camelCase` keys written as `snake_case` (`"imageURL"` becomes `"image_url"`).
        case convertToSnakeCase
    }

    /// How `Date` values are written. Default: ``DateEncodingStrategy/deferredToDate``.
    public var dateEncodingStrategy: DateEncodingStrategy = .deferredToDate
    /// How `Data` values are written. Default: ``DataEncodingStrategy/base64``.
    public var dataEncodingStrategy: DataEncodingStrategy = .base64
    /// How non-finite floats are written. Default: ``NonConformingFloatEncodingStrategy/throw``.
    public var nonConformingFloatEncodingStrategy: NonConformingFloatEncodingStrategy = .throw
    /// How keys are written. Default: ``KeyEncodingStrategy/useDefaultKeys``.
    public var keyEncodingStrategy: KeyEncodingStrategy = .useDefaultKeys
    /// Values the encoded types can read from `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]
    /// The deepest nesting of arrays and objects written; a deeper value throws
    /// `EncodingError.invalidValue`. Default: ``FolioJSONDecoder/defaultMaximumDepth``, the
    /// decoder's, so what this encoder writes a decoder with default settings reads (a
    /// store does not accept a record it could not read back). Encoding nests as the value
    /// does, about as deep in the stack as decoding it (``FolioJSONDecoder/maximumDepth``).
    public var maximumDepth: Int = FolioJSONDecoder.defaultMaximumDepth

    /// An encoder with Foundation's default strategies.
    public init() {}

    /// The JSON text of `value`, as UTF-8 bytes.
    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        try encodedBytes(value)
    }

    /// Appends the JSON text of `value` to `bytes` (so a caller can write a header and
    /// the JSON into one buffer). On error, `bytes` is left as it was.
    ///
    /// The JSON is compact (no whitespace), object keys in the order the value encodes
    /// them (`[String: V]` and `[Int: V]` dictionaries: sorted, so the same value always
    /// gives the same bytes). Top-level fragments (`encode(3)`) are allowed; a top-level
    /// value that encodes nothing throws `EncodingError.invalidValue`, as Foundation's.
    public func encode<T: Encodable>(_ value: T, appendingTo bytes: inout [UInt8]) throws {
        try withEncoded(value) { bytes.append(contentsOf: $0) }
    }

    /// The JSON of `value` in a new array (one copy out of the writer's buffer).
    private func encodedBytes<T: Encodable>(_ value: T) throws -> [UInt8] {
        try withEncoded(value) { Array($0) }
    }

    /// Encodes `value` and hands its JSON, in the writer's buffer, to `body`.
    private func withEncoded<T: Encodable, R>(_ value: T, _ body: (UnsafeBufferPointer<UInt8>) -> R) throws -> R {
        let options = EncodingOptions(self)
        var state = ThreadEncoderState.take(options: options)
        defer { ThreadEncoderState.giveBack(&state) }
        try state.encodeValue(value, key: .none)
        if state.failed {
            // Containers used out of order (or an error caught inside): write it again
            // through the tree encoder, which accepts any order.
            let tree = EncodingState(options: options, basePath: [], isTopLevel: true)
            try TreeEncoding.encode(value, into: tree)
            try checkDepth(of: tree.out.bytes, value)
            return body(tree.out.bytes)
        }
        // Every open array or object of the stream has a frame, except the byte array of a
        // `Data` under `deferredToData`, which holds only numbers: the JSON is at most one
        // level deeper than the frames went, so only then does it need counting.
        if state.deepestFrames >= maximumDepth { try checkDepth(of: state.out.bytes, value) }
        return body(state.out.bytes)
    }

    /// Throws if `json` nests deeper than ``maximumDepth``, counted as the decoder counts.
    private func checkDepth<T>(of json: UnsafeBufferPointer<UInt8>, _ value: T) throws {
        do {
            _ = try JSONInput(UnsafeRawBufferPointer(json)).validate(maximumDepth: maximumDepth)
        } catch {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: [],
                    debugDescription:
                        "\(T.self) nests arrays and objects deeper than maximumDepth (\(maximumDepth)), which a decoder with that limit refuses."
                ))
        }
    }
}
