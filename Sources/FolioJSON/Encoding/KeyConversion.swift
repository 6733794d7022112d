import Foundation
import Synchronization

/// The coding key of array elements and of `superEncoder()`, as Foundation names them:
/// `"Index 3"` (with `intValue` 3) and `"super"`.
struct FolioJSONKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) { self.stringValue = stringValue; self.intValue = nil }
    init(intValue: Int) { self.stringValue = "\(intValue)"; self.intValue = intValue }
    init(index: Int) { self.stringValue = "Index \(index)"; self.intValue = index }
    init(stringValue: String, intValue: Int?) { self.stringValue = stringValue; self.intValue = intValue }

    static let superKey = FolioJSONKey(stringValue: "super")
}

/// `convertToSnakeCase`, as Foundation's `JSONEncoder` defines it: words split where a
/// lowercase letter is followed by an uppercase one, and before the last capital of a
/// run of capitals followed by a lowercase letter (`"myURLProperty"` → `"my_url_property"`);
/// words lowercased and joined with `_`. The first character never starts a word, so
/// leading (and trailing) underscores stay as they are.
enum SnakeCase {
    /// Conversions already made, shared by all encoders (keys are few and repeat).
    private static let cache = Mutex<[String: String]>([:])

    static func convert(_ key: String) -> String {
        if let known = cache.withLock({ $0[key] }) { return known }
        let converted = compute(key)
        cache.withLock { table in
            if table.count > 4096 { table.removeAll(keepingCapacity: true) }
            table[key] = converted
        }
        return converted
    }

    static func isUpper(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .titlecaseLetter: return true
        default: return false
        }
    }

    static func isLower(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .lowercaseLetter
    }

    static func compute(_ key: String) -> String {
        let scalars = Array(key.unicodeScalars)
        guard !scalars.isEmpty else { return key }
        var words: [Range<Int>] = []
        var wordStart = 0
        var searchFrom = 1
        while true {
            // The next capital at or after `searchFrom` ends the current word.
            guard let upper = (searchFrom..<scalars.count).first(where: { isUpper(scalars[$0]) }) else { break }
            words.append(wordStart..<upper)
            // The next lowercase letter after it decides where the new word starts.
            guard let lower = (upper..<scalars.count).first(where: { isLower(scalars[$0]) }) else {
                wordStart = upper
                searchFrom = scalars.count
                break
            }
            if lower == upper + 1 {
                wordStart = upper
            } else {
                // A run of capitals: all but the last form a word (an acronym).
                words.append(upper..<(lower - 1))
                wordStart = lower - 1
            }
            searchFrom = lower + 1
            if searchFrom > scalars.count { break }
        }
        words.append(wordStart..<scalars.count)
        var result = ""
        for (number, range) in words.enumerated() {
            if number > 0 { result += "_" }
            var word = String.UnicodeScalarView()
            word.append(contentsOf: scalars[range])
            result += String(word).lowercased()
        }
        return result
    }
}
