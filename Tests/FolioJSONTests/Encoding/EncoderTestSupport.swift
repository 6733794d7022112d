import Foundation
import Testing
import FolioJSON

/// Encodes with Folio's encoder, as UTF-8 text.
func encFolioText<T: Encodable>(_ value: T, _ configure: (inout FolioJSONEncoder) -> Void = { _ in }) throws -> String {
    var encoder = FolioJSONEncoder()
    configure(&encoder)
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

/// Encodes with Foundation's encoder, as UTF-8 text, `\/` written as `/` (Folio does
/// not escape the slash; both are the same JSON string).
func encFoundationText<T: Encodable>(_ value: T, _ configure: (JSONEncoder) -> Void = { _ in }) throws -> String {
    let encoder = JSONEncoder()
    configure(encoder)
    return String(decoding: try encoder.encode(value), as: UTF8.self).replacingOccurrences(of: "\\/", with: "/")
}

/// Both encoders with the same strategies.
struct EncStrategies {
    var date: FolioJSONEncoder.DateEncodingStrategy = .deferredToDate
    var data: FolioJSONEncoder.DataEncodingStrategy = .base64
    var float: FolioJSONEncoder.NonConformingFloatEncodingStrategy = .throw
    var snakeCase = false

    func apply(_ encoder: inout FolioJSONEncoder) {
        encoder.dateEncodingStrategy = date
        encoder.dataEncodingStrategy = data
        encoder.nonConformingFloatEncodingStrategy = float
        encoder.keyEncodingStrategy = snakeCase ? .convertToSnakeCase : .useDefaultKeys
    }

    func apply(_ encoder: JSONEncoder) {
        switch date {
        case .deferredToDate: encoder.dateEncodingStrategy = .deferredToDate
        case .secondsSince1970: encoder.dateEncodingStrategy = .secondsSince1970
        case .millisecondsSince1970: encoder.dateEncodingStrategy = .millisecondsSince1970
        case .iso8601: encoder.dateEncodingStrategy = .iso8601
        }
        switch data {
        case .deferredToData: encoder.dataEncodingStrategy = .deferredToData
        case .base64: encoder.dataEncodingStrategy = .base64
        }
        switch float {
        case .throw: encoder.nonConformingFloatEncodingStrategy = .throw
        case .convertToString(let positive, let negative, let nan):
            encoder.nonConformingFloatEncodingStrategy = .convertToString(
                positiveInfinity: positive, negativeInfinity: negative, nan: nan)
        }
        encoder.keyEncodingStrategy = snakeCase ? .convertToSnakeCase : .useDefaultKeys
    }

    func apply(_ decoder: JSONDecoder) {
        switch date {
        case .deferredToDate: decoder.dateDecodingStrategy = .deferredToDate
        case .secondsSince1970: decoder.dateDecodingStrategy = .secondsSince1970
        case .millisecondsSince1970: decoder.dateDecodingStrategy = .millisecondsSince1970
        case .iso8601: decoder.dateDecodingStrategy = .iso8601
        }
        switch data {
        case .deferredToData: decoder.dataDecodingStrategy = .deferredToData
        case .base64: decoder.dataDecodingStrategy = .base64
        }
        switch float {
        case .throw: decoder.nonConformingFloatDecodingStrategy = .throw
        case .convertToString(let positive, let negative, let nan):
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: positive, negativeInfinity: negative, nan: nan)
        }
        decoder.keyDecodingStrategy = snakeCase ? .convertFromSnakeCase : .useDefaultKeys
    }
}

/// Encodes with Folio, decodes with Foundation (same strategies), and returns the result.
func encRoundTrip<T: Codable>(_ value: T, _ strategies: EncStrategies = EncStrategies()) throws -> T {
    var encoder = FolioJSONEncoder()
    strategies.apply(&encoder)
    let bytes = try encoder.encode(value)
    let decoder = JSONDecoder()
    strategies.apply(decoder)
    return try decoder.decode(T.self, from: Data(bytes))
}

/// Expects Folio's output, decoded by Foundation, to equal `value`.
func expectEncRoundTrip<T: Codable & Equatable>(
    _ value: T, _ strategies: EncStrategies = EncStrategies(), sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let decoded = try encRoundTrip(value, strategies)
    #expect(decoded == value, sourceLocation: sourceLocation)
}

/// Expects Folio and Foundation to write the same JSON document: the same bytes if
/// `bytes`, else the same parsed objects (object key order differs: Foundation's
/// follows hashing).
func expectEncSameAsFoundation<T: Encodable>(
    _ value: T, _ strategies: EncStrategies = EncStrategies(), bytes: Bool = false,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let folio = try encFolioText(value) { strategies.apply(&$0) }
    let foundation = try encFoundationText(value) { strategies.apply($0) }
    if bytes {
        #expect(folio == foundation, sourceLocation: sourceLocation)
    } else {
        let left = try JSONSerialization.jsonObject(with: Data(folio.utf8), options: [.fragmentsAllowed])
        let right = try JSONSerialization.jsonObject(with: Data(foundation.utf8), options: [.fragmentsAllowed])
        #expect(
            (left as! NSObject).isEqual(right), "folio \(folio) foundation \(foundation)",
            sourceLocation: sourceLocation)
    }
}

/// A key made at run time.
struct EncKey: CodingKey, Hashable {
    var stringValue: String
    var intValue: Int?
    init(_ string: String) { stringValue = string; intValue = nil }
    init(stringValue: String) { self.stringValue = stringValue; intValue = nil }
    init(intValue: Int) { stringValue = "\(intValue)"; self.intValue = intValue }
}
