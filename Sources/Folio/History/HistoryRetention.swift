import Foundation
import FolioStorage

/// How much of its past a store keeps, declared with
/// ``Persistence/setHistoryRetention(_:)`` and stored in the store, so that every process
/// that writes it keeps the same history.
///
/// A past generation stays readable (``Persistence/read(at:_:)``,
/// ``Datastore/changes(from:to:)``, ``Persistence/undo(_:forcing:)``) while any rule keeps it: it is
/// one of the newest ``generations``, it was committed within ``duration``, it is in the
/// newest replaced snapshot files whose sizes add up to at most ``bytes``, or a
/// ``HistoryCheckpoint`` names it. Without any rule (``compactionOnly``, the default) the
/// store holds what compaction leaves: every generation since the last compaction, and the
/// older ones for the grace period of ``SnapshotRetention`` (30 seconds by default) after it.
/// A duration is kept in whole microseconds, rounded up.
///
/// ```swift
/// try await persistence.setHistoryRetention(.generations(10_000))
/// try await persistence.setHistoryRetention(HistoryRetention(duration: .seconds(7 * 86_400), bytes: 1 << 30))
/// ```
///
/// History is kept a snapshot file at a time: compaction writes the live records into a new
/// file, and the file it replaced stays while it holds a generation that is kept. Each such
/// file holds a copy of the records as they were when it was compacted, so the space on
/// disk is the live records, the history, and one more copy of the records per kept file
/// (Docs/Format.md §17.1 says how many).
public struct HistoryRetention: Sendable, Hashable {
    /// Keep the newest this many generations (commits), or nil.
    public var generations: Int?
    /// Keep the generations committed within this long, or nil.
    public var duration: Duration?
    /// Keep replaced snapshot files, newest first, while their sizes add up to at most this
    /// many bytes, or nil.
    public var bytes: Int?

    /// A retention with the given rules; nil leaves a rule out.
    public init(generations: Int? = nil, duration: Duration? = nil, bytes: Int? = nil) {
        self.generations = generations
        self.duration = duration
        self.bytes = bytes
    }

    /// No rule: the store keeps what compaction leaves, and what checkpoints name.
    public static let compactionOnly = HistoryRetention()

    /// Keep the newest `count` generations.
    public static func generations(_ count: Int) -> HistoryRetention { HistoryRetention(generations: count) }

    /// Keep the generations committed within `duration`.
    public static func duration(_ duration: Duration) -> HistoryRetention { HistoryRetention(duration: duration) }

    /// Keep replaced snapshot files up to `bytes` bytes.
    public static func bytes(_ bytes: Int) -> HistoryRetention { HistoryRetention(bytes: bytes) }
}

/// A named generation that the store keeps until ``Persistence/releaseCheckpoint(_:)``,
/// whatever its ``HistoryRetention``.
///
/// ```swift
/// let checkpoint = try await persistence.checkpoint("before import")
/// try await importBooks()
/// let before = try await persistence.read(at: checkpoint.token) { try await books.count() }
/// ```
public struct HistoryCheckpoint: Sendable, Hashable {
    /// The name it was made with.
    public var name: String
    /// The generation it keeps: the store as it was when it was made.
    public var token: ObservationToken
    /// When that generation was committed.
    public var date: Date
}

extension HistoryRetention {
    /// The engine's form, checked: every rule given must be positive.
    func stored() throws(FolioError) -> RetainedHistory {
        func positive(_ value: Int?, _ name: String) throws(FolioError) -> UInt64? {
            guard let value else { return nil }
            guard value > 0 else { throw .invalidArgument(name: name, reason: "must be positive, or nil") }
            return UInt64(value)
        }
        var microseconds: Int?
        if let duration {
            let (seconds, attoseconds) = duration.components
            guard seconds >= 0, duration > .zero else {
                throw .invalidArgument(name: "duration", reason: "must be positive, or nil")
            }
            // Whole microseconds, rounded up (at least one); longer than the store can say,
            // the longest it can.
            let product = seconds.multipliedReportingOverflow(by: 1_000_000)
            let fraction = (attoseconds + 999_999_999_999) / 1_000_000_000_000
            let sum = product.partialValue.addingReportingOverflow(Int64(fraction))
            microseconds = product.overflow || sum.overflow ? Int(Int64.max) : Int(max(sum.partialValue, 1))
        }
        return RetainedHistory(
            generations: try positive(generations, "generations"), duration: try positive(microseconds, "duration"),
            bytes: try positive(bytes, "bytes"))
    }

    /// The retention `history` declares.
    init(_ history: RetainedHistory) {
        func int(_ value: UInt64?) -> Int? { value.map { Int(clamping: $0) } }
        self.init(
            generations: int(history.generations),
            duration: history.duration.map { .microseconds(Int64(clamping: $0)) },
            bytes: int(history.bytes))
    }
}

extension HistoryCheckpoint {
    init(_ stored: StoredCheckpoint) {
        self.init(
            name: stored.name, token: ObservationToken(generation: stored.generation),
            date: Date(timeIntervalSince1970: Double(stored.timestamp) / 1_000_000))
    }
}
