/// Where the commit pages of past generations are, as far as walks back along the commit
/// chain have found them, and the past roots read most recently.
///
/// The chain is walked once: a read of a generation the walks already passed finds its
/// commit page here, and a read of an older one walks on from the oldest found.
///
/// Why an entry found from one newest root is right for a later one: commits append to
/// the chain and never change what an earlier commit page says, and a file number names
/// one file for the store's life. What breaks this is another history (a writer that fell
/// back to an older root after damage writes other commits with the same generations,
/// possibly over the same bytes), and the store never adopts one through the snapshot file
/// it had open: it opens the file anew, so that its page cache, keyed by the open file,
/// cannot mix the two. So the entries are kept for roots read through one open file
/// (``SnapshotFile/cacheIdentity``) and let go when a root of another one comes
/// (``follow(_:)``): a compaction does that too, and the next read walks once more.
struct PastGenerations: Sendable {
    /// The open snapshot file of the newest roots the entries were found from.
    private var anchor: UInt64?
    /// `locations[i]` is the commit of generation `first + i`: consecutive generations of
    /// one chain, each the previous commit of the next.
    private(set) var first: UInt64 = 0
    private(set) var locations: [PastCommit] = []
    /// The oldest generation the chain reaches, once a walk found it: the store's first
    /// commit, the commit after a gap in generations, or the first commit whose predecessor's
    /// file is gone (retention removed it).
    var oldest: UInt64?
    /// Roots of past generations read lately, the most recent last: a read of the same
    /// generation again reuses its open file and its looked-up trees.
    private var recent: [CommittedRoot] = []

    /// The most commits kept: 52 MiB of them. Past it, those farthest from the generation
    /// last walked to are let go (a read of one walks to it again).
    static let capacity = 1 << 20
    /// Past roots kept for reuse.
    static let recentCapacity = 8

    /// The newest generation found, if any.
    var last: UInt64? { locations.isEmpty ? nil : first + UInt64(locations.count - 1) }

    /// The commit of `generation`, if a walk found it.
    func location(of generation: UInt64) -> PastCommit? {
        guard let last, generation >= first, generation <= last else { return nil }
        return locations[Int(generation - first)]
    }

    /// The commit before the one of ``first``, if any.
    private(set) var belowFirst: CommitLocation?

    /// The commit before the one of `generation`.
    func previous(of generation: UInt64) -> CommitLocation? {
        generation == first ? belowFirst : location(of: generation - 1)?.location
    }

    /// Adds the commits a walk from a newer generation found, newest first, ending at the
    /// generation after ``last``, or replacing what was found; `below` is the predecessor of
    /// the oldest of them.
    mutating func append(newestFirst walked: [PastCommit], newest: UInt64, below: CommitLocation?) {
        guard !walked.isEmpty else { return }
        let oldestWalked = newest - UInt64(walked.count - 1)
        if let last, last + 1 == oldestWalked {
            locations.append(contentsOf: walked.reversed())
        } else {
            (first, locations, belowFirst) = (oldestWalked, walked.reversed(), below)
        }
        if locations.count > Self.capacity { dropOldest(locations.count - Self.capacity) }
    }

    /// Adds the commits a walk down from ``first`` found, newest first (`newest` the
    /// generation of the first), ending just below it; `below` is the predecessor of the
    /// oldest of them. Past the capacity, the newest entries make room: the walk went down
    /// for an older generation, which the next reads are likely to want again.
    mutating func prepend(newestFirst walked: [PastCommit], newest: UInt64, below: CommitLocation?) {
        guard !walked.isEmpty else { return }
        guard newest + 1 == first, walked.count < Self.capacity else {
            // Not joined to what was found (the walk kept only its oldest commits): instead.
            (first, locations, belowFirst) = (newest - UInt64(walked.count - 1), walked.reversed(), below)
            return
        }
        let overflow = locations.count + walked.count - Self.capacity
        if overflow > 0 { locations.removeLast(overflow) }
        locations.insert(contentsOf: walked.reversed(), at: 0)
        first -= UInt64(walked.count)
        belowFirst = below
    }

    private mutating func dropOldest(_ count: Int) {
        guard count > 0 else { return }
        belowFirst = locations[count - 1].location
        locations.removeFirst(count)
        first += UInt64(count)
    }

    /// Lets go of every location in files numbered below `file` (retention removed one of
    /// them): the oldest generation reachable is then the first one left.
    mutating func forgetFiles(below file: UInt64) {
        dropOldest(locations.firstIndex { $0.location.fileNumber >= file } ?? locations.count)
        oldest = locations.isEmpty ? nil : first
        recent.removeAll { $0.file.number < file }
    }

    /// Forgets the root of `generation` read lately (its file is gone).
    mutating func forgetRecentRoot(of generation: UInt64) {
        recent.removeAll { $0.record.generation == generation }
    }

    /// The root of `generation` read lately, if any.
    mutating func recentRoot(of generation: UInt64) -> CommittedRoot? {
        guard let index = recent.firstIndex(where: { $0.record.generation == generation }) else { return nil }
        let root = recent.remove(at: index)
        recent.append(root)
        return root
    }

    /// Keeps `root` for reuse, dropping the least recently read past root if there are too many.
    mutating func remember(_ root: CommittedRoot) {
        recent.removeAll { $0.record.generation == root.record.generation }
        recent.append(root)
        if recent.count > Self.recentCapacity { recent.removeFirst() }
    }

    /// Keeps the entries if `newest` is read through the same open file as the roots they
    /// were found from; otherwise starts over from it.
    mutating func follow(_ newest: CommittedRoot) {
        let identity = newest.file.cacheIdentity
        if anchor != identity { self = PastGenerations(anchor: identity) }
    }

    /// Keeps the entries for roots read through `root`'s file, this store's own compaction
    /// of `tip` (its commit follows `tip`'s: the same history, which goes on in a new file),
    /// if they were found from roots of `tip`'s file: the walks after a compaction then go
    /// no further down than the compaction's own commits.
    mutating func follow(compaction root: CommittedRoot, of tip: CommittedRoot) {
        if anchor == tip.file.cacheIdentity { anchor = root.file.cacheIdentity }
    }

    /// Forgets what the walks found (the chain they followed is not the newest root's).
    mutating func forget() {
        self = PastGenerations(anchor: anchor)
    }

    private init(anchor: UInt64?) { self.anchor = anchor }

    init() {}
}

/// What a read of a past generation needs of its commit page, kept so that a second read
/// of the generation reads no commit page: where it is, and the root fields it repeats.
struct PastCommit: Sendable, Equatable {
    var location: CommitLocation
    var catalogRoot: PageAddress
    var liveBytes: UInt64
    var timestamp: UInt64
    /// The commit page's chain value (its stored checksum): which commit of its generation
    /// this is, should another history have written one at the same place.
    var chain: UInt32

    init(_ commit: CommitRecord, at location: CommitLocation, chain: UInt32) {
        self.location = location
        catalogRoot = commit.catalogRoot
        liveBytes = commit.liveBytes
        timestamp = commit.timestamp
        self.chain = chain
    }

    /// The root of this generation, whose commit followed the one at `previous`.
    func record(generation: UInt64, previous: CommitLocation?) -> RootRecord {
        var record = RootRecord(
            generation: generation, snapshotFile: location.fileNumber, committedLength: location.address.end,
            commitPage: location.address, catalogRoot: catalogRoot, liveBytes: liveBytes, timestamp: timestamp,
            previous: previous)
        record.chain = chain
        return record
    }
}
