/// How much the record cache of a persistence keeps (``PersistenceOptions/recordCache``):
/// decoded instances by datastore and identifier, least recently used dropped first
/// (Docs/Cache.md). A bound that is nil is off.
public struct RecordCacheLimits: Sendable, Equatable {
    /// The most records kept. Default 10,000.
    public var count: Int?
    /// The most bytes kept, counted as the records' stored size (their JSON and header; the
    /// decoded instances take more, in proportion). Default 16 MiB.
    public var bytes: Int?
    /// How long a record stays unread before it is dropped. Default: no limit.
    public var age: Duration?

    /// Limits; every argument has the default described on its property.
    public init(count: Int? = 10_000, bytes: Int? = 16 << 20, age: Duration? = nil) {
        precondition((count ?? 0) >= 0 && (bytes ?? 0) >= 0 && (age ?? .zero) >= .zero, "negative record cache limit")
        self.count = count
        self.bytes = bytes
        self.age = age
    }
}
