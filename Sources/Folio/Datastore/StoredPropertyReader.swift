/// Reads the value a key path names without applying the key path where a cheaper read is
/// exactly equivalent: from the root's own bytes when the key path names a property stored
/// inline in a struct, or through `Identifiable.id` when it is that requirement's key path
/// (what `DatastoreFormat.identifier` defaults to).
///
/// A key path applied in generic code costs about a thousand instructions (its projection
/// instantiates generic metadata on every call); a record write reads its identifier twice
/// and each indexed value once, so that was several per cent of an insert.
/// `MemoryLayout.offset(of:)` returns an offset only for a chain of stored properties of
/// structs held inline, whose storage is exactly the value the key path reads; the
/// requirement's key path reads what the conformance's `id` returns, which is what
/// calling it does. Anything else (a computed property, a class, an optional chain) goes
/// through the key path.
struct StoredPropertyReader<Root, Value>: Sendable {
    let keyPath: KeyPath<Root, Value> & Sendable
    /// The value's byte offset inside `Root`, or nil.
    let offset: Int?
    /// Reads `Identifiable.id`, when `keyPath` is that requirement's key path.
    let identifiable: (@Sendable (Root) -> Value)?

    init(_ keyPath: KeyPath<Root, Value> & Sendable) {
        self.keyPath = keyPath
        offset = MemoryLayout<Root>.offset(of: keyPath)
        if offset == nil, let type = Root.self as? any Identifiable.Type {
            identifiable = Self.requirementReader(type, keyPath)
        } else {
            identifiable = nil
        }
    }

    /// The value at the key path in `root`.
    @inline(__always)
    func read(_ root: Root) -> Value {
        if let offset {
            // The root's address is aligned for Root and a stored property's offset for its
            // type, so the load is aligned; it copies the value (retaining what it holds).
            return withUnsafePointer(to: root) { UnsafeRawPointer($0).load(fromByteOffset: offset, as: Value.self) }
        }
        if let identifiable { return identifiable(root) }
        return root[keyPath: keyPath]
    }

    /// A reader of `T.id` if `keyPath` is `\T.id` through the requirement; `T` is `Root`
    /// (opened from `Root.self`), so the pointers below only rename one type as itself.
    private static func requirementReader<T: Identifiable>(
        _ type: T.Type, _ keyPath: AnyKeyPath
    ) -> (@Sendable (Root) -> Value)? {
        guard keyPath == \T.id as AnyKeyPath, T.ID.self == Value.self, T.self == Root.self else { return nil }
        return { root in
            withUnsafePointer(to: root) { rootPointer in
                let id = UnsafeRawPointer(rootPointer).assumingMemoryBound(to: T.self).pointee.id
                return unsafeBitCast(id, to: Value.self)
            }
        }
    }
}
