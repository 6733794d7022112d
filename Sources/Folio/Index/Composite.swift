import FolioStorage

/// Marks the composite key type, so an index can tell it is composite without knowing its
/// components.
protocol CompositeKey {}

extension Composite: CompositeKey {}

/// A tuple of index values, usable as one index value: ordered by its first component, then
/// its second, and so on (its key is the concatenation of the components' keys, which the
/// encoding makes order-preserving: see Docs/Keys.md).
///
/// Declare a composite index over a key path to a tuple, `Index(\Book.authorAndYear)`, and
/// query it with `Composite("Ann", 1999)` or a range of them.
public struct Composite<each Component: KeyComponent>: KeyComponent, Hashable, Comparable {
    /// The components.
    public let components: (repeat each Component)

    /// A composite of `components`.
    public init(_ components: repeat each Component) {
        self.components = (repeat each components)
    }

    public func appendKey(to encoder: inout KeyEncoder) {
        for component in repeat each components { encoder.append(component) }
    }

    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Self {
        var local = decoder
        func next<T: KeyComponent>(_ type: T.Type) throws(StorageError) -> T { try local.decode(type) }
        let result = Self(repeat try next((each Component).self))
        decoder = local
        return result
    }

    /// The key bytes, which order and identify composites.
    var keyBytes: [UInt8] {
        var encoder = KeyEncoder()
        appendKey(to: &encoder)
        return encoder.bytes
    }

    public static func == (a: Self, b: Self) -> Bool { a.keyBytes == b.keyBytes }
    public static func < (a: Self, b: Self) -> Bool { KeyBytes.compare(a.keyBytes, b.keyBytes) < 0 }
    public func hash(into hasher: inout Hasher) { hasher.combine(keyBytes) }
}

extension Composite: CustomStringConvertible {
    public var description: String {
        var parts: [String] = []
        for component in repeat each components { parts.append(String(describing: component)) }
        return "(" + parts.joined(separator: ", ") + ")"
    }
}
