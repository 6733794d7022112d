/// What one shipment did (``Replicator/ship()``).
public struct ReplicationReport: Sendable, Equatable {
    /// The generation the replica held before, nil if it held none.
    public var fromGeneration: UInt64?
    /// The generation the replica holds now: the source's newest durable one when the
    /// shipment began.
    public var generation: UInt64
    /// Bytes of snapshot files written to the destination.
    public var bytesShipped: UInt64
    /// Snapshot files written to, by number.
    public var filesWritten: [UInt64]
    /// Snapshot files removed from the replica because the source no longer has them (its
    /// compaction and retention removed them), by number.
    public var filesRemoved: [UInt64]

    /// A report of a shipment from `fromGeneration` to `generation`.
    public init(
        fromGeneration: UInt64?, generation: UInt64, bytesShipped: UInt64, filesWritten: [UInt64],
        filesRemoved: [UInt64]
    ) {
        self.fromGeneration = fromGeneration
        self.generation = generation
        self.bytesShipped = bytesShipped
        self.filesWritten = filesWritten
        self.filesRemoved = filesRemoved
    }

    /// True if the replica moved to a newer generation.
    public var advanced: Bool { fromGeneration != generation }
}

/// What a following replicator reports (``Replicator/follow(pollInterval:minimumInterval:onEvent:)``).
public enum ReplicationEvent: Sendable {
    /// A shipment moved the replica to a newer generation.
    case shipped(ReplicationReport)
    /// A shipment failed (the destination is unreachable or full, a source file could not
    /// be read); the replica still holds its last published generation. The replicator
    /// tries again after `retryingIn`.
    case failed(StorageError, retryingIn: Duration)
}
