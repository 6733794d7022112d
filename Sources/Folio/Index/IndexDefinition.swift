import Synchronization
import FolioStorage

/// How many instances an index value may map to.
public enum IndexKind: String, Sendable, Codable {
    /// Several instances may share a value (``Index``).
    case oneToMany
    /// Each value maps to at most one instance (``OneToOneIndex``); a duplicate is an error.
    case oneToOne
    /// The key path yields a collection; each element is a value (``ManyToManyIndex``).
    case manyToMany
}

/// What an index entry holds.
public enum IndexStorage: String, Sendable, Codable {
    /// The entry holds the identifier; reading through the index looks the record up.
    case reference
    /// A covering index: the entry holds the whole record, so a read through the index
    /// needs no second lookup, at the cost of storing each record once more.
    ///
    /// ```swift
    /// let isbn = OneToOneIndex(\Book.isbn, storage: .covering)
    /// ```
    // Stored in the catalog and in index fingerprints by its raw value, which is the name
    // earlier releases gave the case: changing it would rebuild every such index.
    case covering = "direct"
}

/// An index as the datastore machinery sees it, whatever its declared type. Created by
/// the index types (``Index``, ``OneToOneIndex``, ``ManyToManyIndex``); its members are
/// internal.
public struct IndexDefinition<Instance>: Sendable {
    let kind: IndexKind
    let storage: IndexStorage
    /// Identifies this declaration within its format instance (index names come from the
    /// format's property names, found by reflection; queries find them by this number).
    let id: UInt64
    /// `\Type.property` for stored properties; nil for computed ones, whose printed form is
    /// a memory address that changes between launches.
    let keyPathDescription: String?
    let valueType: String
    /// The declaration's ``Index/init(_:storage:version:)`` version: the only thing that tells
    /// one body of a computed key path from another.
    let version: Int
    /// A unique index over an optional value: `nil` is not constrained (as SQL's UNIQUE
    /// ignores NULL), so each record's nil entry is keyed by nil followed by its identifier.
    let nilIsDistinct: Bool
    /// The indexed key path itself: queries match a predicate's key paths to indexes by
    /// key path equality (stored and computed alike).
    let keyPath: AnyKeyPath & Sendable
    /// Whether the key path leads to a tuple (a composite index): its entries are not
    /// values a predicate compares whole.
    let composite: Bool
    /// A composite index declared by its components' key paths (`Index(\Book.author,
    /// \Book.year)`): those key paths, in order, so queries can use the index for an
    /// equality on the first components and a range on the next. Empty otherwise.
    let componentKeyPaths: [AnyKeyPath & Sendable]
    /// The encoded values of an instance, sorted and without duplicates.
    let values: @Sendable (Instance) -> [[UInt8]]
    /// A readable form of an encoded value, for error messages.
    let describeValue: @Sendable ([UInt8]) -> String

    /// What identifies the declaration across launches: kind, storage, value type, key path
    /// (stored ones by name; every computed one prints alike, hence ``version``), the version
    /// when it is not 1, and how a unique index keys nil. A change makes the index rebuild.
    /// Declarations of earlier releases (version 1, no optional unique index) keep their
    /// fingerprint.
    var fingerprint: String {
        var text = "\(kind.rawValue);\(storage.rawValue);\(valueType);\(keyPathDescription ?? "computed")"
        if version != 1 { text += ";v\(version)" }
        if nilIsDistinct { text += ";nil-distinct" }
        return text
    }

    /// A definition whose instances may each have several values (a many-to-many index):
    /// their keys sorted, each once.
    init<Value: KeyComponent>(
        kind: IndexKind, storage: IndexStorage, version: Int, keyPath: AnyKeyPath & Sendable,
        components: [AnyKeyPath & Sendable] = [], valueType: Value.Type,
        values: @escaping @Sendable (Instance) -> [Value]
    ) {
        self.init(
            kind: kind, storage: storage, version: version, keyPath: keyPath, components: components,
            valueType: valueType
        ) { instance in
            var keys = values(instance).map { $0.keyBytes }
            if keys.count > 1 {
                keys.sort { KeyBytes.compare($0, $1) < 0 }
                var unique: [[UInt8]] = []
                for key in keys where unique.last != key { unique.append(key) }
                keys = unique
            }
            return keys
        }
    }

    /// A definition whose instances each have one value (every index but a many-to-many
    /// one): its key alone, with no array of values to build and map. (These closures are
    /// not specialized for the declaring module's types, so every generic step looks its
    /// type up at run time; an update of many records computes them for each.)
    init<Value: KeyComponent>(
        kind: IndexKind, storage: IndexStorage, version: Int, keyPath: AnyKeyPath & Sendable,
        components: [AnyKeyPath & Sendable] = [], valueType: Value.Type,
        value: @escaping @Sendable (Instance) -> Value
    ) {
        self.init(
            kind: kind, storage: storage, version: version, keyPath: keyPath, components: components,
            valueType: valueType
        ) { [value($0).keyBytes] }
    }

    private init<Value: KeyComponent>(
        kind: IndexKind, storage: IndexStorage, version: Int, keyPath: AnyKeyPath & Sendable,
        components: [AnyKeyPath & Sendable], valueType: Value.Type,
        keys: @escaping @Sendable (Instance) -> [[UInt8]]
    ) {
        self.kind = kind
        self.keyPath = keyPath
        componentKeyPaths = components
        composite = Value.self is any CompositeKey.Type
        self.storage = storage
        self.version = version
        nilIsDistinct = kind == .oneToOne && Value.self is any OptionalKeyComponent.Type
        self.id = IndexDeclarationCounter.next()
        let printed =
            components.isEmpty
            ? String(describing: keyPath) : components.map { String(describing: $0) }.joined(separator: ", ")
        keyPathDescription = printed.contains("<computed") ? nil : printed
        self.valueType = TypeName.of(Value.self)
        values = keys
        describeValue = { bytes in
            var decoder = KeyDecoder(bytes)
            guard let value = try? decoder.decode(Value.self) else { return "\(bytes)" }
            return String(describing: value)
        }
    }
}

/// A declared index: a stored property of a ``DatastoreFormat``.
public protocol IndexDeclaration<Instance>: Sendable {
    /// The record type the index reads values from.
    associatedtype Instance
    /// The index's definition.
    var definition: IndexDefinition<Instance> { get }
}

/// A one-to-many index: several instances may share a value. Declare it as a property of
/// the format: `let author = Index(\Book.authorName)`; query with
/// `datastore.load("Ann", from: \.author)` or a range.
public struct Index<Instance: Sendable, Value: KeyComponent>: IndexDeclaration {
    public let definition: IndexDefinition<Instance>

    /// Indexes the value at `keyPath` (stored or computed).
    ///
    /// - Parameter keyPath: The indexed value, stored or computed.
    /// - Parameter storage: What an entry holds: the identifier, or the whole record.
    /// - Parameter version: Raise it when the body of a computed key path changes: computed
    ///   key paths cannot be told apart across launches, so a new version is what makes the
    ///   index rebuild. Stored key paths are recognised by name; a new version rebuilds them too.
    public init(_ keyPath: KeyPath<Instance, Value> & Sendable, storage: IndexStorage = .reference, version: Int = 1) {
        definition = IndexDefinition(
            kind: .oneToMany, storage: storage, version: version, keyPath: keyPath, valueType: Value.self,
            value: StoredPropertyReader(keyPath).read)
    }

    /// Indexes a tuple of values, ordered by the first element, then the second, and so on:
    /// `let byAuthorAndYear = Index(\Book.authorAndYear)` where `authorAndYear: (String, Int)`.
    /// Raise `version` when the key path's body changes (see ``init(_:storage:version:)``).
    public init<each Component: KeyComponent>(
        _ keyPath: KeyPath<Instance, (repeat each Component)> & Sendable,
        storage: IndexStorage = .reference, version: Int = 1
    )
    where Value == Composite<repeat each Component> {
        definition = IndexDefinition(
            kind: .oneToMany, storage: storage, version: version, keyPath: keyPath, valueType: Value.self,
            value: { Composite(repeat each $0[keyPath: keyPath]) })
    }

    /// Indexes several values of the instance together, ordered by the first, then the
    /// second, and so on: `let byAuthorAndYear = Index(\Book.author, \Book.year)`. Query it
    /// with `Composite("Ann", 1999)` or a range of them, or with a predicate: an equality on
    /// the first values and a range on the next one read a range of this index.
    public init<First: KeyComponent, Second: KeyComponent, each Rest: KeyComponent>(
        _ first: KeyPath<Instance, First> & Sendable, _ second: KeyPath<Instance, Second> & Sendable,
        _ rest: repeat KeyPath<Instance, each Rest> & Sendable, storage: IndexStorage = .reference, version: Int = 1
    ) where Value == Composite<First, Second, repeat each Rest> {
        definition = IndexDefinition(
            kind: .oneToMany, storage: storage, version: version, keyPath: first,
            components: componentList(first, second, repeat each rest), valueType: Value.self,
            value: { Composite($0[keyPath: first], $0[keyPath: second], repeat $0[keyPath: each rest]) })
    }
}

/// The key paths of a composite index's components, in order.
private func componentList<Instance, First, Second, each Rest>(
    _ first: KeyPath<Instance, First> & Sendable, _ second: KeyPath<Instance, Second> & Sendable,
    _ rest: repeat KeyPath<Instance, each Rest> & Sendable
) -> [AnyKeyPath & Sendable] {
    var paths: [AnyKeyPath & Sendable] = [first, second]
    for path in repeat each rest { paths.append(path) }
    return paths
}

/// A unique index: each value maps to at most one instance. Persisting a second instance
/// with the same value throws ``FolioError/uniqueIndexConflict(datastore:index:value:existing:new:)``
/// and changes nothing.
///
/// Over an optional value, `nil` is not constrained, as NULL is not under SQL's UNIQUE: any
/// number of instances may have nil. `load(nil, from:)` finds none of them (nil maps to no
/// single instance, as `= NULL` matches no row); `count(nil, from:)` counts them, and reads
/// of the whole index (`load(..., from:)`) list them first, in identifier order.
public struct OneToOneIndex<Instance: Sendable, Value: KeyComponent>: IndexDeclaration {
    public let definition: IndexDefinition<Instance>

    /// Indexes the value at `keyPath` (stored or computed), uniquely. Raise `version` when
    /// the body of a computed key path changes (see ``Index/init(_:storage:version:)-(KeyPath<Instance,Value>Sendable,_,_)``).
    public init(_ keyPath: KeyPath<Instance, Value> & Sendable, storage: IndexStorage = .reference, version: Int = 1) {
        definition = IndexDefinition(
            kind: .oneToOne, storage: storage, version: version, keyPath: keyPath, valueType: Value.self,
            value: StoredPropertyReader(keyPath).read)
    }

    /// Indexes a tuple of values, uniquely. Raise `version` when the key path's body changes.
    public init<each Component: KeyComponent>(
        _ keyPath: KeyPath<Instance, (repeat each Component)> & Sendable,
        storage: IndexStorage = .reference, version: Int = 1
    )
    where Value == Composite<repeat each Component> {
        definition = IndexDefinition(
            kind: .oneToOne, storage: storage, version: version, keyPath: keyPath, valueType: Value.self,
            value: { Composite(repeat each $0[keyPath: keyPath]) })
    }

    /// Indexes several values of the instance together, uniquely:
    /// `let slot = OneToOneIndex(\Booking.room, \Booking.day)`. Predicates use it as they
    /// use ``Index/init(_:_:_:storage:version:)``.
    public init<First: KeyComponent, Second: KeyComponent, each Rest: KeyComponent>(
        _ first: KeyPath<Instance, First> & Sendable, _ second: KeyPath<Instance, Second> & Sendable,
        _ rest: repeat KeyPath<Instance, each Rest> & Sendable, storage: IndexStorage = .reference, version: Int = 1
    ) where Value == Composite<First, Second, repeat each Rest> {
        definition = IndexDefinition(
            kind: .oneToOne, storage: storage, version: version, keyPath: first,
            components: componentList(first, second, repeat each rest), valueType: Value.self,
            value: { Composite($0[keyPath: first], $0[keyPath: second], repeat $0[keyPath: each rest]) })
    }
}

/// A many-to-many index: the key path yields a collection, and each (distinct) element is
/// an index value: `let authors = ManyToManyIndex(\Book.authorIDs)` finds every book of an
/// author with `load(authorID, from: \.authors)`.
public struct ManyToManyIndex<Instance: Sendable, Value: KeyComponent>: IndexDeclaration {
    public let definition: IndexDefinition<Instance>

    /// Indexes every element of the collection at `keyPath`. Raise `version` when the body
    /// of a computed key path changes (see ``Index/init(_:storage:version:)-(KeyPath<Instance,Value>Sendable,_,_)``).
    public init<Values: Sequence & SendableMetatype>(
        _ keyPath: KeyPath<Instance, Values> & Sendable,
        storage: IndexStorage = .reference, version: Int = 1
    )
    where Values.Element == Value {
        definition = IndexDefinition(
            kind: .manyToMany, storage: storage, version: version, keyPath: keyPath, valueType: Value.self,
            values: { Array($0[keyPath: keyPath]) })
    }
}

/// Optional, whatever it wraps: how an index tells that its values may be nil.
protocol OptionalKeyComponent {}
extension Optional: OptionalKeyComponent {}

/// Numbers index declarations as they are created (a static can't live in a generic type).
enum IndexDeclarationCounter {
    private static let counter = Atomic<UInt64>(0)
    static func next() -> UInt64 { counter.add(1, ordering: .relaxed).newValue }
}

/// An index whose entries are values of one type: every index kind. Range reads
/// (`load(a..<b, from: \.index)`) work through any of them.
public protocol ValueIndexDeclaration<Instance, Value>: IndexDeclaration {
    /// The type of the index's values.
    associatedtype Value: KeyComponent
}

/// An index where one value may map to several instances (``Index``, ``ManyToManyIndex``):
/// reading one value gives a sequence.
public protocol MultiValueIndexDeclaration<Instance, Value>: ValueIndexDeclaration {}

extension Index: MultiValueIndexDeclaration {}
extension ManyToManyIndex: MultiValueIndexDeclaration {}
extension OneToOneIndex: ValueIndexDeclaration {}

extension KeyComponent {
    /// This value's key bytes. Used on hot paths instead of the variadic
    /// `KeyEncoding.encode(_:)`, whose parameter pack is instantiated at run time on every
    /// call.
    @inline(__always)
    var keyBytes: [UInt8] {
        var encoder = KeyEncoder(reservingCapacity: 24)
        encoder.append(self)
        return encoder.bytes
    }
}
