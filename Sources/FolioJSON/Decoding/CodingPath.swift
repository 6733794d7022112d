import Foundation

// The coding paths and keys of a decode, and the markers the decoder recognises types by.

/// A coding path, as a list from the value up to the root.
final class PathNode {
    let parent: PathNode?
    let key: any CodingKey

    init(parent: PathNode?, key: any CodingKey) {
        self.parent = parent
        self.key = key
    }

    static func path(_ node: PathNode?) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var node = node
        while let current = node {
            keys.append(current.key)
            node = current.parent
        }
        return keys.reversed()
    }

    static func path(_ node: PathNode?, _ key: (any CodingKey)?) -> [any CodingKey] {
        var keys = path(node)
        if let key { keys.append(key) }
        return keys
    }
}

/// The key of an array element in coding paths, as Foundation names it.
struct IndexKey: CodingKey {
    let index: Int
    init(_ index: Int) { self.index = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.index = intValue }
    var stringValue: String { "Index \(index)" }
    var intValue: Int? { index }
}

/// A key made from a string (the `super` key, raw dictionary keys).
struct StringKey: CodingKey {
    let stringValue: String
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { self.stringValue = String(intValue) }
    var intValue: Int? { nil }
}

/// `[String: V]`, which Foundation decodes with its raw keys when a key strategy is set.
protocol StringKeyedDictionaryMarker {
    static var valueType: any Decodable.Type { get }
}

extension Dictionary: StringKeyedDictionaryMarker where Key == String, Value: Decodable {
    static var valueType: any Decodable.Type { Value.self }
}

/// An object's keys when they cannot be compared byte for byte (escapes, non-ASCII
/// bytes, more than a few members, or a key strategy): decoded once, first one wins
/// for duplicates, as Foundation's decoder does.
final class DecodedKeys {
    var ordered: [String] = []
    var values: [String: Int] = [:]
}
