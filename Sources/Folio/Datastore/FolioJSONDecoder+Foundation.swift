import Foundation

extension FolioJSONDecoder {
    /// Foundation's `JSONDecoder` with this decoder's settings, for the Foundation form of
    /// the migration hook: records are written with the format's strategies, so the decoder
    /// handed to that hook must read them with the same ones (a default `JSONDecoder` fails
    /// on ISO 8601 dates, snake-case keys, converted non-finite floats...).
    ///
    /// Every strategy and `userInfo` carry over exactly. `maximumDepth` does not: Foundation's
    /// decoder has no such setting and accepts 512 levels of nesting whatever this decoder's
    /// limit is.
    var foundationDecoder: JSONDecoder {
        let decoder = JSONDecoder()
        switch dateDecodingStrategy {
        case .deferredToDate: decoder.dateDecodingStrategy = .deferredToDate
        case .secondsSince1970: decoder.dateDecodingStrategy = .secondsSince1970
        case .millisecondsSince1970: decoder.dateDecodingStrategy = .millisecondsSince1970
        case .iso8601: decoder.dateDecodingStrategy = .iso8601
        }
        switch dataDecodingStrategy {
        case .deferredToData: decoder.dataDecodingStrategy = .deferredToData
        case .base64: decoder.dataDecodingStrategy = .base64
        }
        switch nonConformingFloatDecodingStrategy {
        case .throw: decoder.nonConformingFloatDecodingStrategy = .throw
        case .convertFromString(let positiveInfinity, let negativeInfinity, let nan):
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: positiveInfinity,
                negativeInfinity: negativeInfinity, nan: nan)
        }
        switch keyDecodingStrategy {
        case .useDefaultKeys: decoder.keyDecodingStrategy = .useDefaultKeys
        case .convertFromSnakeCase: decoder.keyDecodingStrategy = .convertFromSnakeCase
        }
        decoder.userInfo = userInfo
        return decoder
    }
}
