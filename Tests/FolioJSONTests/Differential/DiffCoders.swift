import Foundation
import FolioJSON

/// Which implementation a `DiffCoder` runs. Every check takes its coders as parameters, so
/// the same checks run Foundation against Foundation (proving the harness) and Folio
/// against Foundation (proving Folio's coder reads and writes what Foundation's does).
enum DiffSide: String, Sendable {
    case foundation, folio
    /// Foundation with a planted bug (the first digit 1 of the JSON text read or written as
    /// 2): the self-test checks the harness reports it.
    case faulty
}

/// A strategy set, translated to both coders' own enums.
struct DiffStrategies: Sendable, CustomStringConvertible {
    enum DateKind: Sendable { case deferred, seconds, milliseconds, iso8601 }
    enum DataKind: Sendable { case deferred, base64 }

    var date: DateKind = .deferred
    var data: DataKind = .base64
    /// Positive infinity, negative infinity and NaN strings; nil: throw.
    var floats: [String]? = nil
    var snakeCase = false

    var description: String {
        "date: \(date), data: \(data), floats: \(floats.map { "\($0)" } ?? "throw"), snakeCase: \(snakeCase)"
    }
}

struct DiffCoder: Sendable, CustomStringConvertible {
    var side: DiffSide
    var strategies = DiffStrategies()
    /// For Folio's decoder only.
    var maximumDepth: Int? = nil

    static let foundation = DiffCoder(side: .foundation)
    /// The coder under test. `FOLIO_JSON_DIFF_SUBJECT=foundation` puts Foundation in its
    /// place: every differential test then runs Foundation against itself and must pass,
    /// which proves the harness (how it was built while Folio's coder was a stub).
    static let folio = DiffCoder(
        side: ProcessInfo.processInfo.environment["FOLIO_JSON_DIFF_SUBJECT"] == "foundation" ? .foundation : .folio)

    func with(_ strategies: DiffStrategies) -> DiffCoder {
        var copy = self
        copy.strategies = strategies
        return copy
    }

    var description: String { "\(side)" }

    static func plantBug(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        if let i = bytes.firstIndex(of: UInt8(ascii: "1")) { bytes[i] = UInt8(ascii: "2") }
        return bytes
    }

    func encode<T: Encodable>(_ value: T, userInfo: [CodingUserInfoKey: any Sendable] = [:]) throws -> [UInt8] {
        switch side {
        case .faulty:
            return Self.plantBug(
                try DiffCoder(side: .foundation, strategies: strategies).encode(value, userInfo: userInfo))
        case .foundation:
            let encoder = JSONEncoder()
            switch strategies.date {
            case .deferred: encoder.dateEncodingStrategy = .deferredToDate
            case .seconds: encoder.dateEncodingStrategy = .secondsSince1970
            case .milliseconds: encoder.dateEncodingStrategy = .millisecondsSince1970
            case .iso8601: encoder.dateEncodingStrategy = .iso8601
            }
            switch strategies.data {
            case .deferred: encoder.dataEncodingStrategy = .deferredToData
            case .base64: encoder.dataEncodingStrategy = .base64
            }
            if let f = strategies.floats {
                encoder.nonConformingFloatEncodingStrategy = .convertToString(
                    positiveInfinity: f[0], negativeInfinity: f[1], nan: f[2])
            }
            if strategies.snakeCase { encoder.keyEncodingStrategy = .convertToSnakeCase }
            encoder.userInfo = userInfo
            return Array(try encoder.encode(value))
        case .folio:
            var encoder = FolioJSONEncoder()
            switch strategies.date {
            case .deferred: encoder.dateEncodingStrategy = .deferredToDate
            case .seconds: encoder.dateEncodingStrategy = .secondsSince1970
            case .milliseconds: encoder.dateEncodingStrategy = .millisecondsSince1970
            case .iso8601: encoder.dateEncodingStrategy = .iso8601
            }
            switch strategies.data {
            case .deferred: encoder.dataEncodingStrategy = .deferredToData
            case .base64: encoder.dataEncodingStrategy = .base64
            }
            if let f = strategies.floats {
                encoder.nonConformingFloatEncodingStrategy = .convertToString(
                    positiveInfinity: f[0], negativeInfinity: f[1], nan: f[2])
            }
            if strategies.snakeCase { encoder.keyEncodingStrategy = .convertToSnakeCase }
            encoder.userInfo = userInfo
            return try encoder.encode(value)
        }
    }

    func decode<T: Decodable>(
        _ type: T.Type, from bytes: [UInt8], userInfo: [CodingUserInfoKey: any Sendable] = [:]
    ) throws -> T {
        switch side {
        case .folio: return try folioDecoder(userInfo).decode(type, from: bytes)
        default: return try decode(type, from: bytes[...], userInfo: userInfo)
        }
    }

    /// Decodes from a slice whose base array goes on past its end (Folio decodes a record in
    /// place in a page: it must not read past the slice).
    func decode<T: Decodable>(
        _ type: T.Type, from bytes: ArraySlice<UInt8>, userInfo: [CodingUserInfoKey: any Sendable] = [:]
    ) throws -> T {
        switch side {
        case .faulty:
            return try DiffCoder(side: .foundation, strategies: strategies).decode(
                type, from: Self.plantBug(Array(bytes)), userInfo: userInfo)
        case .foundation:
            return try foundationDecoder(userInfo).decode(type, from: Data(bytes))
        case .folio:
            return try folioDecoder(userInfo).decode(type, from: bytes)
        }
    }

    func foundationDecoder(_ userInfo: [CodingUserInfoKey: any Sendable]) -> JSONDecoder {
        let decoder = JSONDecoder()
        switch strategies.date {
        case .deferred: decoder.dateDecodingStrategy = .deferredToDate
        case .seconds: decoder.dateDecodingStrategy = .secondsSince1970
        case .milliseconds: decoder.dateDecodingStrategy = .millisecondsSince1970
        case .iso8601: decoder.dateDecodingStrategy = .iso8601
        }
        switch strategies.data {
        case .deferred: decoder.dataDecodingStrategy = .deferredToData
        case .base64: decoder.dataDecodingStrategy = .base64
        }
        if let f = strategies.floats {
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: f[0], negativeInfinity: f[1], nan: f[2])
        }
        if strategies.snakeCase { decoder.keyDecodingStrategy = .convertFromSnakeCase }
        decoder.userInfo = userInfo
        return decoder
    }

    func folioDecoder(_ userInfo: [CodingUserInfoKey: any Sendable]) -> FolioJSONDecoder {
        var decoder = FolioJSONDecoder()
        switch strategies.date {
        case .deferred: decoder.dateDecodingStrategy = .deferredToDate
        case .seconds: decoder.dateDecodingStrategy = .secondsSince1970
        case .milliseconds: decoder.dateDecodingStrategy = .millisecondsSince1970
        case .iso8601: decoder.dateDecodingStrategy = .iso8601
        }
        switch strategies.data {
        case .deferred: decoder.dataDecodingStrategy = .deferredToData
        case .base64: decoder.dataDecodingStrategy = .base64
        }
        if let f = strategies.floats {
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: f[0], negativeInfinity: f[1], nan: f[2])
        }
        if strategies.snakeCase { decoder.keyDecodingStrategy = .convertFromSnakeCase }
        if let maximumDepth { decoder.maximumDepth = maximumDepth }
        decoder.userInfo = userInfo
        return decoder
    }

    /// Decodes a generated value of `shape`.
    func decode(_ shape: DiffShape, from bytes: [UInt8]) throws -> DiffValue {
        try decode(DiffGenerated.self, from: bytes, userInfo: [.diffShapes: ShapeStack(shape)]).value
    }

    func decode(_ shape: DiffShape, from bytes: ArraySlice<UInt8>) throws -> DiffValue {
        try decode(DiffGenerated.self, from: bytes, userInfo: [.diffShapes: ShapeStack(shape)]).value
    }

    func encode(_ value: DiffValue, as shape: DiffShape) throws -> [UInt8] {
        try encode(DiffGenerated(shape: shape, value: value))
    }
}

/// Any JSON value, decoded by trying each kind in turn through the `Decoder` API only: the
/// tree to compare two encoders' output by (key order and escaping do not matter) and the
/// type hostile input is decoded as.
indirect enum DiffAnyJSON: Decodable, Equatable, CustomStringConvertible {
    case null, bool(Bool), int(Int64), uint(UInt64), double(Double), string(String)
    case array([DiffAnyJSON]), object([String: DiffAnyJSON])

    init(from decoder: any Decoder) throws {
        if let c = try? decoder.container(keyedBy: DiffKey.self) {
            var d: [String: DiffAnyJSON] = [:]
            for key in c.allKeys { d[key.stringValue] = try c.decode(DiffAnyJSON.self, forKey: key) }
            self = .object(d)
            return
        }
        if var c = try? decoder.unkeyedContainer() {
            var a: [DiffAnyJSON] = []
            while !c.isAtEnd {
                let before = c.currentIndex
                a.append(try c.decode(DiffAnyJSON.self))
                guard c.currentIndex > before else {
                    throw GeneratedError(description: "unkeyed container did not advance")
                }
            }
            self = .array(a)
            return
        }
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let i = try? c.decode(Int64.self) {
            self = .int(i)
        } else if let u = try? c.decode(UInt64.self) {
            self = .uint(u)
        } else {
            self = .double(try c.decode(Double.self))
        }
    }

    static func == (a: DiffAnyJSON, b: DiffAnyJSON) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.uint(let x), .uint(let y)): return x == y
        case (.double(let x), .double(let y)): return sameDouble(x, y)
        case (.string(let x), .string(let y)): return x.unicodeScalars.elementsEqual(y.unicodeScalars)
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count
                && x.allSatisfy { key, value in
                    guard let i = y.index(forKey: key) else { return false }
                    return y[i].key.unicodeScalars.elementsEqual(key.unicodeScalars) && y[i].value == value
                }
        default: return false
        }
    }

    var description: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return "\(b)"
        case .int(let i): return "\(i)"
        case .uint(let u): return "\(u)"
        case .double(let d): return "\(d)"
        case .string(let s): return String(reflecting: s)
        case .array(let a): return "[" + a.map(\.description).joined(separator: ",") + "]"
        case .object(let o):
            return "{" + o.map { "\(String(reflecting: $0.key)):\($0.value)" }.joined(separator: ",") + "}"
        }
    }
}

/// The JSON text for a report: valid UTF-8 as is, else the bytes in hex.
func jsonText(_ bytes: [UInt8]) -> String {
    let limit = 2000
    let clipped = Array(bytes.prefix(limit))
    let suffix = bytes.count > limit ? "… (\(bytes.count) bytes)" : ""
    if let s = String(validating: clipped, as: UTF8.self) { return String(reflecting: s) + suffix }
    return "bytes " + clipped.map { String($0, radix: 16) }.joined(separator: " ") + suffix
}

/// The outcome of decoding, for comparing two decoders.
enum DiffOutcome<T> {
    case value(T)
    case failure(any Error)

    init(_ body: () throws -> T) {
        do { self = .value(try body()) } catch { self = .failure(error) }
    }

    var value: T? { if case .value(let v) = self { return v } else { return nil } }
}

/// Collects mismatches of one test; records the first few as issues with everything needed
/// to reproduce them and counts the rest.
final class DiffReport: @unchecked Sendable {
    let name: String
    private(set) var failures: [String] = []
    private(set) var findings: [String] = []
    private(set) var failureCount = 0
    private(set) var findingCount = 0

    init(_ name: String) { self.name = name }

    func fail(_ message: String) {
        failureCount += 1
        if failures.count < 12 { failures.append(message) }
    }

    /// Not a failure: a difference the issue allows (Folio accepting what Foundation refuses).
    func note(_ message: String) {
        findingCount += 1
        if findings.count < 12 { findings.append(message) }
    }

    var shouldStop: Bool { failureCount >= 200 }
}
