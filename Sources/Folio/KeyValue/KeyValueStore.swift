import FolioStorage

extension Persistence {
    /// The persistence's key-value store: settings, cursors, flags and other one-off values
    /// kept beside the datastores, in the same store and the same transactions.
    public nonisolated var values: KeyValueStore<Access> { KeyValueStore(persistence: self) }
}

/// Values by key, beside a persistence's datastores (Dflat's `WorkspaceDictionary`, a
/// transactional `UserDefaults`). Get it with ``Persistence/values``; declare keys as
/// static members of ``ValueKeys``.
///
/// ```swift
/// extension ValueKeys {
///     static let launches = ValueKey<Int>("launches", default: 0)
/// }
///
/// try persistence.values.set(persistence.values[.launches] + 1, for: .launches)
/// try await persistence.values.flush()  // durable from here on
/// ```
///
/// **Reads** are synchronous. A key read before, or set in this process, is answered from
/// memory without waiting for anything; another is read from the store on demand (keys are
/// not loaded at open). Outside a transaction a read sees every value this process set
/// before it, and the newest committed value of other keys.
///
/// **Sets** outside a transaction are visible to this process at once and are committed in
/// the background, several at a time, in the order they were made; ``flush()`` returns once
/// every earlier set is durable. Inside ``Persistence/perform(_:)-9rdbv`` a set is part of
/// the transaction: it commits or rolls back with the datastore writes, and readers outside
/// see it when the transaction commits, together with its datastore writes. Inside
/// ``Persistence/read(_:)`` every read sees one snapshot: the store as the scope began, with
/// the values this process had set by then.
///
/// **Errors** name the key: a value that does not encode is refused and nothing changes; a
/// stored value that does not decode as the key's type throws from ``value(for:)`` (the
/// subscript gives the default) and is left as it is, with every other key.
public struct KeyValueStore<Access: AccessMode>: Sendable {
    /// The persistence the values belong to.
    public let persistence: Persistence<Access>

    var core: PersistenceCore { persistence.core }
    var memory: KeyValueMemory { core.values }

    /// The value of `key`, or its default if none is stored. Throws
    /// ``FolioError/valueDecodingFailed(key:type:reason:)`` if the stored value does not
    /// decode as the key's type, and ``FolioError/keyTooLong(key:length:maximum:)``.
    ///
    /// ```swift
    /// let lastSync = try persistence.values.value(for: .lastSync)  // nil until set
    /// ```
    public func value<Value>(for key: ValueKey<Value>) throws(FolioError) -> Value {
        try storedValue(for: key) ?? key.defaultValue
    }

    /// The value of `key`; its default if none is stored or if the stored one cannot be read
    /// (``value(for:)`` says why).
    public subscript<Value>(key: ValueKey<Value>) -> Value {
        (try? value(for: key)) ?? key.defaultValue
    }

    /// Whether a value is stored under `key` (of any type).
    public func contains(_ key: ValueKeys) throws(FolioError) -> Bool {
        try slot(named: key.name).slot.bytes != nil
    }

    /// The names of the keys with a value whose names start with `prefix`, in the order of
    /// their UTF-8 bytes (every key if `prefix` is empty). Outside `perform` this includes
    /// the keys set in this process and not yet committed.
    public func keys(withPrefix prefix: String = "") throws(FolioError) -> [String] {
        let prefixKey = try KeyValueLayout.key(prefix)
        let context = TransactionContext.current(for: core)
        if context == nil { core.store.followIfRootFileChanged() }
        // Bytes, not `String`s: two names Swift calls equal (a precomposed and a decomposed
        // "é") are two keys of the store.
        var keys: Set<HashedKey> = []
        let read = { (source: ReadSource) throws(FolioError) in
            var cursor = try FolioError.wrap { () throws(StorageError) in
                try source.cursor(in: KeyValueLayout.tree, range: .prefix(prefixKey), direction: .forward)
            }
            while let key = try FolioError.wrap({ () throws(StorageError) in try cursor.nextKey() }) {
                keys.insert(HashedKey(key))
            }
        }
        let pending: KeyValueMemory.Pending?
        if let context {
            if case .write(let transaction) = context.source {
                try transaction.exclusively { () throws(FolioError) in try read(context.readSource) }
            } else {
                try read(context.readSource)
            }
            pending = context.pendingValues
        } else {
            // This process's writes and the store's view taken together: no write is in
            // neither, and no batch the view shows hides a newer value.
            let (view, writes) = try FolioError.wrap { () throws(StorageError) in
                try memory.snapshot { () throws(StorageError) in try core.store.read() }
            }
            try read(.view(view))
            pending = writes
        }
        for (key, present) in pending?.writes(withPrefix: prefixKey) ?? [] {
            if present { keys.insert(key) } else { keys.remove(key) }
        }
        return keys.map(\.bytes).sorted { $0.lexicographicallyPrecedes($1) }.map { String(decoding: $0, as: UTF8.self) }
    }

    // MARK: Machinery

    /// The stored value of `key` as its type, or nil if none is stored.
    func storedValue<Value>(for key: ValueKey<Value>) throws(FolioError) -> Value? {
        let (slot, keyBytes, generation) = try slot(named: key.name)
        let value = try slot.value(as: Value.self, key: key.name)
        if let value, let generation, slot.type != ObjectIdentifier(Value.self) {
            memory.rememberDecoded(value, of: slot, key: keyBytes, generation: generation)
        }
        return value
    }

    /// What is stored under `name` for a read now: in the current transaction or snapshot
    /// if there is one; otherwise this process's write not yet published, or the newest
    /// committed value (from the cache, or the store). `generation` is the committed
    /// generation the slot was read in, when it came from the cache or the store outside a
    /// write transaction (a decoded value may then be cached).
    func slot(named name: String) throws(FolioError) -> (slot: ValueSlot, key: [UInt8], generation: UInt64?) {
        let key = try KeyValueLayout.key(name)
        if let context = TransactionContext.current(for: core) {
            switch context.source {
            case .write(let transaction):
                // Whole statements only: tasks sharing the transaction never see one half-done.
                let bytes = try transaction.exclusively { () throws(FolioError) -> [UInt8]? in
                    try FolioError.wrap { () throws(StorageError) in try transaction.get(key, in: KeyValueLayout.tree) }
                }
                return (ValueSlot(bytes: bytes, decoded: nil, type: nil), key, nil)
            case .read(let view):
                // The snapshot: this process's writes and the view, taken together when
                // `read { }` began.
                if let pending = context.pendingValues?.write(HashedKey(key)) { return (pending, key, nil) }
                return (try memory.committed(key, in: view), key, view.isPast ? nil : view.generation)
            }
        }
        core.store.followIfRootFileChanged()
        if let pending = memory.pendingWrite(key, in: core.store) { return (pending, key, nil) }
        // A read-write persistence's cache knows every generation (they are all its own), so
        // the newest one is read without a snapshot, as `Datastore.cachedNewest` argues.
        if !core.isReadOnly, let generation = core.store.openGeneration,
            let cached = memory.cached(key, generation: generation)
        {
            return (cached, key, generation)
        }
        let view = try FolioError.wrap { () throws(StorageError) in try core.store.read() }
        return (try memory.committed(key, in: view), key, view.generation)
    }
}
