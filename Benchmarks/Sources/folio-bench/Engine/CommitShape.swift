/// One way to make a commit durable with raw POSIX calls, measured as a floor of the engine
/// suite: whatever else an engine does, a commit that takes these steps on this disk cannot
/// be faster. The rows compare format v1's protocol with the one-sync shapes of format v2;
/// ``all`` is the list, in the order the rows appear.
struct CommitShape: Sendable {
    /// What a commit does, in order.
    enum Steps: Sendable {
        /// Format v1's protocol: append the data + fsync, write `root.tmp` + fsync, rename
        /// it over `root`, fsync the directory.
        case rootReplace
        /// Append the data to a growing file + fsync.
        case append
        /// Overwrite the next part of a preallocated, zero-filled region + data sync.
        case overwrite
        /// Write one root slot in place + data sync (no data written).
        case slot
        /// ``overwrite``, then ``slot``: two data syncs (LMDB's meta-page commit).
        case overwriteThenSyncedSlot
        /// ``overwrite``, then the root slot written in place with no sync of its own
        /// (format v2's commit: the slot is made durable lazily, recovery follows the
        /// complete runs past it).
        case overwriteThenSlot

        /// Whether the data file is extended with zeros and synced before the timed part.
        var preallocates: Bool {
            switch self {
            case .overwrite, .overwriteThenSyncedSlot, .overwriteThenSlot: return true
            case .rootReplace, .append, .slot: return false
            }
        }

        /// Whether a commit writes a root slot in place.
        var writesSlot: Bool {
            switch self {
            case .slot, .overwriteThenSyncedSlot, .overwriteThenSlot: return true
            case .rootReplace, .append, .overwrite: return false
            }
        }

        /// Whether a commit writes data (the slot-only shape writes none).
        var writesData: Bool { self != .slot }
    }

    /// The row's workload name.
    var workload: String
    var steps: Steps
    /// Data bytes written per commit (0 for the slot-only shape).
    var payloadBytes: Int
    /// What the row's notes say a commit does.
    var description: String

    /// Bytes of a format-v1 root file (`root.tmp`).
    static let rootFileBytes = 256
    /// Bytes of one root slot written in place.
    static let slotBytes = 128
    /// Distance between the two root slots: a block apart, so one slot's write never
    /// touches the other's block (as LMDB's two meta pages).
    static let slotSpacing = 4096
    /// Data bytes per commit of every floor but `fsync-floor` and the slot-only one.
    static let commitBytes = 16 * 1024
    /// Chunk in which a preallocated region is extended with zeros.
    static let preallocationChunk = 1 << 20

    /// Every commit floor, in row order: the historical `fsync-floor` (format v1's protocol
    /// with a 100-byte commit, kept so older results stay comparable), then the floors with
    /// 16 KiB per commit.
    static let all: [CommitShape] = [
        CommitShape(
            workload: "fsync-floor", steps: .rootReplace, payloadBytes: 100,
            description:
                "format v1's protocol with a tiny commit: pwrite 100 B appended + fsync, write 256 B root.tmp + fsync, rename over root, fsync directory"
        ),
        CommitShape(
            workload: "v1-commit-floor", steps: .rootReplace, payloadBytes: commitBytes,
            description:
                "format v1's protocol (today's): pwrite 16 KiB appended + fsync, write 256 B root.tmp + fsync, rename over root, fsync directory"
        ),
        CommitShape(
            workload: "append-fsync-floor", steps: .append, payloadBytes: commitBytes,
            description: "pwrite 16 KiB appended to a growing file + fsync; no root"),
        CommitShape(
            workload: "overwrite-fdatasync-floor", steps: .overwrite, payloadBytes: commitBytes,
            description: "pwrite 16 KiB over a preallocated region + fdatasync; no root"),
        CommitShape(
            workload: "slot-fdatasync-floor", steps: .slot, payloadBytes: 0,
            description:
                "pwrite 128 B in place into one of two root slots (alternating, 4 KiB apart) + fdatasync; no data"),
        CommitShape(
            workload: "lmdb-commit-floor", steps: .overwriteThenSyncedSlot, payloadBytes: commitBytes,
            description:
                "LMDB's shape, two syncs: pwrite 16 KiB over a preallocated region + fdatasync, then pwrite 128 B into a root slot in place + fdatasync"
        ),
        CommitShape(
            workload: "v2-commit-floor", steps: .overwriteThenSlot, payloadBytes: commitBytes,
            description:
                "format v2's shape, one sync: pwrite 16 KiB over a preallocated region + fdatasync, then pwrite 128 B into a root slot in place with no sync (durable once the run is synced: v2's recovery follows complete runs past the slot, which is made durable lazily)"
        ),
    ]

    /// The notes of this shape's row for `commits` commits per run.
    func notes(commits: Int) -> [String] {
        var notes = [description + "; \(commits) commits per run, same file system as the stores"]
        if steps.preallocates {
            notes.append(
                "before the timed part: the data file extended with zeros in \(Format.bytes(Int64(Self.preallocationChunk))) chunks to \(Format.bytes(Int64(Self.preallocatedBytes(commits: commits, payload: payloadBytes)))), fsynced once and its directory fsynced, so the timed data syncs overwrite allocated blocks and write no metadata"
            )
        }
        if steps.writesSlot {
            notes.append(
                "the root file (two \(Self.slotBytes)-byte slots \(Self.slotSpacing) B apart) created zero-filled and synced before the timed part"
            )
        }
        notes.append(DiskSync.platformNote)
        return notes
    }

    /// The size of the preallocated region for `commits` commits of `payload` bytes: whole
    /// chunks, at least one.
    static func preallocatedBytes(commits: Int, payload: Int) -> Int {
        let needed = max(1, commits * payload)
        return (needed + preallocationChunk - 1) / preallocationChunk * preallocationChunk
    }
}
