import Foundation
import FolioTestSupport
import FolioJSON
import Testing

/// What a decode ended with, in a form both decoders' results can be compared in: the
/// value, or the `DecodingError` case and its coding path.
enum DecodeOutcome<T>: CustomStringConvertible {
    case value(T)
    case failure(kind: String, path: [String])

    var description: String {
        switch self {
        case .value(let v): return "value(\(v))"
        case .failure(let kind, let path): return "\(kind) at \(path)"
        }
    }

    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}

func outcome<T>(_ body: () throws -> T) -> DecodeOutcome<T> {
    do {
        return .value(try body())
    } catch let error as DecodingError {
        let path: (DecodingError.Context) -> [String] = {
            $0.codingPath.map { $0.intValue.map { "#\($0)" } ?? $0.stringValue }
        }
        switch error {
        case .dataCorrupted(let c): return .failure(kind: "dataCorrupted", path: path(c))
        case .keyNotFound(let k, let c): return .failure(kind: "keyNotFound(\(k.stringValue))", path: path(c))
        case .typeMismatch(_, let c): return .failure(kind: "typeMismatch", path: path(c))
        case .valueNotFound(_, let c): return .failure(kind: "valueNotFound", path: path(c))
        @unknown default: return .failure(kind: "unknown", path: [])
        }
    } catch {
        return .failure(kind: "not a DecodingError: \(error)", path: [])
    }
}

/// The strategies to set on both decoders.
struct Strategies {
    enum Date { case deferred, seconds, milliseconds, iso8601 }
    var date: Date = .deferred
    var base64 = true
    var nonConforming: (String, String, String)? = nil
    var snakeCase = false
    /// Folio's nesting limit (Foundation's is a fixed 512); nil: the default.
    var maximumDepth: Int? = nil

    func folio() -> FolioJSONDecoder {
        var d = FolioJSONDecoder()
        if let maximumDepth { d.maximumDepth = maximumDepth }
        switch date {
        case .deferred: d.dateDecodingStrategy = .deferredToDate
        case .seconds: d.dateDecodingStrategy = .secondsSince1970
        case .milliseconds: d.dateDecodingStrategy = .millisecondsSince1970
        case .iso8601: d.dateDecodingStrategy = .iso8601
        }
        d.dataDecodingStrategy = base64 ? .base64 : .deferredToData
        if let (p, n, nan) = nonConforming {
            d.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: p, negativeInfinity: n, nan: nan)
        }
        if snakeCase { d.keyDecodingStrategy = .convertFromSnakeCase }
        return d
    }

    func foundation() -> JSONDecoder {
        let d = JSONDecoder()
        switch date {
        case .deferred: d.dateDecodingStrategy = .deferredToDate
        case .seconds: d.dateDecodingStrategy = .secondsSince1970
        case .milliseconds: d.dateDecodingStrategy = .millisecondsSince1970
        case .iso8601: d.dateDecodingStrategy = .iso8601
        }
        d.dataDecodingStrategy = base64 ? .base64 : .deferredToData
        if let (p, n, nan) = nonConforming {
            d.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: p, negativeInfinity: n, nan: nan)
        }
        if snakeCase { d.keyDecodingStrategy = .convertFromSnakeCase }
        return d
    }
}

/// Both decoders' outcomes for the same bytes.
func bothOutcomes<T: Decodable>(
    _ type: T.Type, _ bytes: [UInt8], _ strategies: Strategies = Strategies()
) -> (folio: DecodeOutcome<T>, foundation: DecodeOutcome<T>) {
    let folio = outcome { try strategies.folio().decode(T.self, from: bytes) }
    let foundation = outcome { try strategies.foundation().decode(T.self, from: Data(bytes)) }
    return (folio, foundation)
}

/// Expects Folio's decoder to do what Foundation's does with `bytes`: an equal value
/// (by `same`), or the same error case at the same coding path.
func expectSame<T: Decodable>(
    _ type: T.Type, _ bytes: [UInt8], _ strategies: Strategies = Strategies(),
    same: (T, T) -> Bool, sourceLocation: SourceLocation = #_sourceLocation
) {
    let (folio, foundation) = bothOutcomes(type, bytes, strategies)
    let input = String(decoding: bytes.prefix(200), as: UTF8.self)
    switch (folio, foundation) {
    case (.value(let a), .value(let b)):
        #expect(same(a, b), "\(T.self) from \(input): Folio \(a), Foundation \(b)", sourceLocation: sourceLocation)
    case (.failure(let k1, let p1), .failure(let k2, let p2)):
        #expect(
            k1 == k2 && p1 == p2, "\(T.self) from \(input): Folio \(k1) at \(p1), Foundation \(k2) at \(p2)",
            sourceLocation: sourceLocation)
    default:
        Issue.record(
            "\(T.self) from \(input): Folio \(folio), Foundation \(foundation)", sourceLocation: sourceLocation)
    }
}

func expectSame<T: Decodable & Equatable>(
    _ type: T.Type, _ json: String, _ strategies: Strategies = Strategies(),
    sourceLocation: SourceLocation = #_sourceLocation
) {
    expectSame(type, Array(json.utf8), strategies, same: ==, sourceLocation: sourceLocation)
}

func expectSame<T: Decodable & Equatable>(
    _ type: T.Type, bytes: [UInt8], _ strategies: Strategies = Strategies(),
    sourceLocation: SourceLocation = #_sourceLocation
) {
    expectSame(type, bytes, strategies, same: ==, sourceLocation: sourceLocation)
}

/// Encodes `value` with Foundation's encoder and expects both decoders to agree on it
/// (and to return it).
func expectRoundTrip<T: Codable & Equatable>(
    _ value: T, _ strategies: Strategies = Strategies(),
    encoder: JSONEncoder = JSONEncoder(),
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let bytes = Array(try encoder.encode(value))
    expectSame(T.self, bytes, strategies, same: ==, sourceLocation: sourceLocation)
    #expect(try strategies.folio().decode(T.self, from: bytes) == value, sourceLocation: sourceLocation)
}

/// Floating-point equality that tells -0.0 from 0.0 and takes NaN as equal to NaN.
func sameBits(_ a: Double, _ b: Double) -> Bool { a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN) }
func sameBits(_ a: Float, _ b: Float) -> Bool { a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN) }

/// A small deterministic generator, so failures reproduce: the project's SplitMix64.
typealias SeededGenerator = SplitMix64
