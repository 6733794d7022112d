import Foundation

/// The reference the engine is checked against: named trees as sorted arrays of byte keys.
/// Deliberately simple (binary search in an array), so that it is obviously right.
public struct TreeModel: Equatable, Sendable {
    public var trees: [String: [(key: [UInt8], value: [UInt8])]] = [:]

    public init() {}

    public static func == (a: TreeModel, b: TreeModel) -> Bool {
        guard a.trees.keys.sorted() == b.trees.keys.sorted() else { return false }
        for (name, entries) in a.trees {
            let other = b.trees[name]!
            guard entries.count == other.count else { return false }
            for index in entries.indices
            where !same(entries[index].key, other[index].key) || !same(entries[index].value, other[index].value) {
                return false
            }
        }
        return true
    }

    /// Byte arrays compared with `memcmp`: the generic `==` goes a byte at a time in debug
    /// builds, and the kill tests compare megabyte values for every past generation they read.
    private static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
    }

    private static func less(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

    private func index(of key: [UInt8], in entries: [(key: [UInt8], value: [UInt8])]) -> (Int, Bool) {
        var low = 0, high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if Self.less(entries[mid].key, key) { low = mid + 1 } else { high = mid }
        }
        return (low, low < entries.count && entries[low].key == key)
    }

    public func get(_ key: [UInt8], in tree: String) -> [UInt8]? {
        guard let entries = trees[tree] else { return nil }
        let (index, found) = index(of: key, in: entries)
        return found ? entries[index].value : nil
    }

    /// Returns true if the key existed.
    @discardableResult
    public mutating func put(_ value: [UInt8], for key: [UInt8], in tree: String) -> Bool {
        let (index, found) = index(of: key, in: trees[tree] ?? [])
        // Mutate in place (the default-value subscript does not copy the array).
        if found {
            trees[tree, default: []][index].value = value
        } else {
            trees[tree, default: []].insert((key, value), at: index)
        }
        return found
    }

    /// Returns true if the key existed.
    @discardableResult
    public mutating func remove(_ key: [UInt8], from tree: String) -> Bool {
        guard let entries = trees[tree] else { return false }
        let (index, found) = index(of: key, in: entries)
        guard found else { return false }
        trees[tree, default: []].remove(at: index)
        return true
    }

    public mutating func drop(_ tree: String) -> Bool { trees.removeValue(forKey: tree) != nil }

    /// Keys and values of `tree` with `lower <= key < upper` (nil: unbounded), in order.
    public func range(
        in tree: String, lower: [UInt8]?, lowerInclusive: Bool, upper: [UInt8]?,
        upperInclusive: Bool
    ) -> [(key: [UInt8], value: [UInt8])] {
        (trees[tree] ?? []).filter { entry in
            if let lower {
                if lowerInclusive ? Self.less(entry.key, lower) : !Self.less(lower, entry.key) { return false }
            }
            if let upper {
                if upperInclusive ? Self.less(upper, entry.key) : !Self.less(entry.key, upper) { return false }
            }
            return true
        }
    }
}
