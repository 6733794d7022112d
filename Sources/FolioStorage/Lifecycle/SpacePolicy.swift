/// A snapshot file that compaction replaced, kept for the retention period.
struct RetiredSnapshot: Sendable {
    /// The file's number.
    var number: UInt64
    /// When its grace period ends.
    var removeAfter: ContinuousClock.Instant
    /// Its length when it was retired (it is never written again).
    var bytes: UInt64
    /// Kept because the store's declared history keeps it (then `removeAfter` is its next
    /// check), not for the grace period.
    var keptForHistory = false

    init(number: UInt64, removeAfter: ContinuousClock.Instant, bytes: UInt64, keptForHistory: Bool = false) {
        self.number = number
        self.removeAfter = removeAfter
        self.bytes = bytes
        self.keptForHistory = keptForHistory
    }
}

/// Automatic compaction's state after failures: the next attempt waits until the dead
/// bytes reach `retryAtDeadBytes`, a margin that doubles with each consecutive failure.
struct CompactionBackoff: Sendable, Equatable {
    /// Consecutive failed automatic compactions (at least 1).
    var failures: Int
    /// No automatic compaction before the dead bytes reach this.
    var retryAtDeadBytes: UInt64

    /// The backoff after a failure at `deadBytes` dead bytes, following `previous` (nil
    /// after a success): wait for `step` × 2^(failures - 1) more dead bytes, the doubling
    /// capped at 2^10.
    static func after(failureAt deadBytes: UInt64, previous: CompactionBackoff?, step: UInt64) -> CompactionBackoff {
        let failures = (previous?.failures ?? 0) + 1
        let margin = max(step, 1 << 20).multipliedReportingOverflow(by: 1 << UInt64(min(failures - 1, 10)))
        let wait = margin.overflow ? UInt64.max : margin.partialValue
        let retry = deadBytes.addingReportingOverflow(wait)
        return CompactionBackoff(failures: failures, retryAtDeadBytes: retry.overflow ? .max : retry.partialValue)
    }
}

extension RootRecord {
    /// Bytes of the snapshot file that no current page uses (replaced pages, old commit
    /// pages): the committed length less the live bytes and the header. From the root
    /// record alone, so checking it per commit costs nothing.
    var deadBytes: UInt64 {
        let used = liveBytes + UInt64(SnapshotHeader.size)
        return committedLength >= used ? committedLength - used : 0
    }
}
