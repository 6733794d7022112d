import FolioStorage
/// Settings of a persistence, fixed when it is opened.
public struct PersistenceOptions: Sendable {
    /// `Durability.full` (default: every transaction is durable when it returns) or
    /// `Durability.grouped(window:)`.
    public var durability: Durability
    /// Byte limit of the page cache. Default 8 MiB.
    public var cacheCapacity: Int
    /// Automatic compaction after commits, or nil for on-demand only.
    public var autoCompaction: AutoCompaction?
    /// How long, and how many bytes of, snapshot files replaced by compaction are kept for
    /// readers in other processes.
    public var retention: SnapshotRetention
    /// Where recovered problems are reported. Default: standard error.
    public var log: @Sendable (String) -> Void
    /// A write transaction's memory budget between spills, in bytes (an estimate of what
    /// its changed records, index entries and copied pages hold): past it, the transaction
    /// writes its changed pages to disk ahead of its commit, so they do not stay in memory.
    /// Default 64 MiB (chosen by measurement: Docs/Benchmarks.md); nil keeps every change
    /// in memory until the commit (see `StoreOptions.transactionSpillBytes`).
    public var transactionSpillBytes: Int? = 64 << 20
    /// The most records (or index entries) of one datastore a commit lists for observers.
    /// A transaction that changes more records of a datastore records it as changed
    /// wholesale: observers get ``DatastoreEvent/reload(token:)``, live queries re-run,
    /// and the record cache drops the datastore's entries. With a limit, a transaction of any
    /// size runs in bounded memory. Default 16,384, so that the change record of one commit
    /// stays bounded; `Int.max` lists every record. The marker is part of format version 3:
    /// the store becomes version 3 at its first commit past the limit, and builds that read
    /// version 2 only then refuse it as a newer format (see `StoreOptions.changeRecordKeyLimit`).
    public var changeRecordKeyLimit: Int = 16_384
    /// The cache of decoded records: a repeated read of an unchanged record returns the
    /// instance decoded before, without reading or decoding it again, and never a value the
    /// read's snapshot would not see (Docs/Cache.md). Nil turns it off. Default
    /// ``RecordCacheLimits/init(count:bytes:age:)``'s defaults.
    public var recordCache: RecordCacheLimits? = RecordCacheLimits()
    /// The cache of the key-value store's committed values (``Persistence/values``): a key
    /// read before is read from memory, and its decoded value reused. Nil turns it off
    /// (every read of a key not set since then reads the store). Default: 100,000 keys,
    /// 32 MiB of stored bytes, no age limit.
    public var valueCache: RecordCacheLimits? = RecordCacheLimits(count: 100_000, bytes: 32 << 20)

    /// How long a write waits while a writer in another process is in the middle of its
    /// own (its turn holds the store's lock), before it throws
    /// `FolioError.storage(.lockedByAnotherWriter(path:))` (SQLite's busy timeout). Writes
    /// from an async call (the key-value store's commits included) sleep the task between
    /// tries; opening read-write, and `values` writes made durable by ``Persistence/close()``,
    /// sleep their thread. Nothing spins. Default 5
    /// seconds, so that an app and its extensions saving at the same moment take turns
    /// instead of failing; zero tries once. A second read-write persistence of the store in
    /// this process is refused at once whatever the timeout.
    ///
    /// ```swift
    /// var options = PersistenceOptions()
    /// options.busyTimeout = .seconds(1)
    /// let persistence = try Persistence(at: path, options: options)
    /// ```
    public var busyTimeout: Duration = .seconds(5)

    /// Options; every argument has the default described on its property.
    public init(
        durability: Durability = .full, cacheCapacity: Int = 8 << 20,
        autoCompaction: AutoCompaction? = AutoCompaction(), retention: SnapshotRetention = SnapshotRetention(),
        log: @escaping @Sendable (String) -> Void = StoreOptions.standardErrorLog,
        recordCache: RecordCacheLimits? = RecordCacheLimits(),
        valueCache: RecordCacheLimits? = RecordCacheLimits(count: 100_000, bytes: 32 << 20)
    ) {
        self.recordCache = recordCache
        self.valueCache = valueCache
        self.durability = durability
        self.cacheCapacity = cacheCapacity
        self.autoCompaction = autoCompaction
        self.retention = retention
        self.log = log
    }

    func storeOptions(_ fileSystem: any FileSystem, createIfMissing: Bool = true) -> StoreOptions {
        var options = StoreOptions(
            fileSystem: fileSystem, durability: durability, cacheCapacity: cacheCapacity,
            createIfMissing: createIfMissing, autoCompaction: autoCompaction, retention: retention, log: log)
        options.transactionSpillBytes = transactionSpillBytes
        options.changeRecordKeyLimit = changeRecordKeyLimit
        options.busyTimeout = busyTimeout
        return options
    }
}
