import FolioStorage

// The engine types that Folio's own API names (options, reports, progress), re-exported
// by name so that `import Folio` is enough to spell them. Everything else of the engine
// (`Store`, read views, write transactions, file systems, crash points) needs
// `import FolioStorage`; key components and `StorageError` come with FolioKeys. The
// engine's verification report is named only by tools (`@_spi(Engine) import Folio`).

/// When a transaction is durable: every commit (the default), or once per window.
public typealias Durability = FolioStorage.Durability
/// When compaction runs by itself after a commit.
public typealias AutoCompaction = FolioStorage.AutoCompaction
/// How long and how many replaced snapshot files are kept for readers in other processes.
public typealias SnapshotRetention = FolioStorage.SnapshotRetention
/// Space used by a store: live and dead bytes, files.
public typealias StorageStatistics = FolioStorage.StorageStatistics
/// Page I/O since the store was opened.
public typealias IOStatistics = FolioStorage.IOStatistics
/// What a compaction did.
public typealias CompactionReport = FolioStorage.CompactionReport
/// Progress of a compaction.
public typealias CompactionProgress = FolioStorage.CompactionProgress
/// The engine's verification of every page, checksum and tree.
@_spi(Engine) public typealias VerificationReport = FolioStorage.VerificationReport
/// One problem a verification found.
@_spi(Engine) public typealias VerificationProblem = FolioStorage.VerificationProblem
/// Progress of a verification.
public typealias VerificationProgress = FolioStorage.VerificationProgress
/// What a backup wrote.
public typealias BackupReport = FolioStorage.BackupReport
/// What a replication shipped.
public typealias ReplicationReport = FolioStorage.ReplicationReport
/// What a following replication reports: a shipment, or a failure it retries.
public typealias ReplicationEvent = FolioStorage.ReplicationEvent
/// Where a replication ships a store, for destinations other than a directory.
public typealias ReplicaDestination = FolioStorage.ReplicaDestination
/// What a replica destination holds.
public typealias ReplicaHoldings = FolioStorage.ReplicaHoldings
