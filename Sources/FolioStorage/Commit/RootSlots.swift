/// The writer's side of the root file (Docs/Format.md §8, Docs/Durability.md §1): two
/// slots written in place, one `pwrite` each, with no temporary file, rename or directory
/// fsync per commit.
///
/// The anchor invariant: one slot, the anchor, is known to be durable, and only the other
/// slot is ever written. Its writes are not synced one by one; the root file is
/// fdatasync'd before a write that would put the slot ``maximumAnchorLag`` generations
/// ahead of the anchor (and at close, around a compaction, and after recovery), and only
/// then does the slot written last become the anchor, so that the next write goes to the
/// other one. A power cut during a slot write can tear that slot, never the anchor: some
/// slot always names a durable root.
///
/// Why the sync comes before the write that reaches the bound, not after it: then the
/// older of the two slots is always durable (the anchor), and the newer one the slot
/// written since, which is what the bytes alone say to a writer that did not write them
/// (a writer in another process, once writers take turns). Syncing after the write would
/// leave the newer slot durable and the older one 64 generations back, which such a
/// writer would take for the anchor, reaching the bound again at its first write.
///
/// The lag bound: the anchor is never more than ``maximumAnchorLag`` generations behind the
/// newest slot written. It bounds what a torn or lost slot costs: a reader that opens
/// after a power cut sees the anchor until a writer recovers the runs after it, and a
/// damaged run after the anchor cuts off at most the commits up to the newest
/// (Docs/Durability.md §1.5). Counted in generations, not slot writes: one slot write can
/// cover many commits (group commit, a grouped flush).
///
/// Why an unsynced slot loses nothing: a slot is written only after its commit's run is
/// fdatasync'd (Store+Commit), and recovery follows complete runs forward from whichever
/// slot survives. The slot says where recovery starts, not what is durable.
///
/// Every use holds the store's `rootFileLock`, which owns this value.
struct RootSlots {
    /// The most generations the anchor may lag the newest slot written: the slot write that
    /// reaches it is synced at once.
    static let maximumAnchorLag: UInt64 = 64

    private let layout: StoreLayout
    private let fileSystem: any FileSystem
    /// The root file, open for writing; nil while the file still has the version 1 layout.
    private var handle: (any StorageFile)?
    /// The slot known durable.
    private(set) var anchor = 0
    /// What each slot holds, as far as this writer knows (nil: empty or unusable).
    private var contents: [RootRecord?] = [nil, nil]
    /// Each slot's bytes as this writer last wrote or read them in a turn, which decode to
    /// `contents` (nil: not known). While the file still holds them, ``reload()`` compares
    /// instead of decoding: a turn of a writer that writes alone costs no slot decode.
    private var knownBytes: [[UInt8]?] = [nil, nil]
    /// What the slots held when this writer last followed other writers between turns.
    private var followed: [RootRecord?]?
    /// Slot writes since the root file was last synced.
    private(set) var unsyncedWrites = 0
    /// The generation the anchor names.
    private(set) var anchorGeneration: UInt64
    /// The generation of the newest root written (or, before any write, the anchor's).
    private var newestWritten: UInt64
    /// A slot held bytes that do not decode when the file was opened (a torn write): the
    /// opener rewrites it, so that verification finds both slots sound.
    private(set) var foundDamagedSlot = false
    /// The snapshot files the slots named when the file was opened (every slot that
    /// decoded, whichever the store opened at), before this writer wrote any.
    private(set) var namedAtOpen: Set<UInt64> = []
    /// The store's format version as its slots say: the highest version of a slot, 1 until
    /// a version 1 root file is upgraded. Every slot write says at least this, so a store
    /// never goes back to an older version (Docs/Format.md §18).
    private(set) var formatVersion: UInt32

    /// Opens the root file of a store whose writer lock the caller holds. `opened` is the
    /// root the store opened at. A version 1 root file is left as it is until
    /// ``upgradeIfNeeded(to:in:)``; a version 2 one is synced once, so that whichever slot the
    /// previous writer left unsynced is durable before this writer writes the other.
    init(layout: StoreLayout, fileSystem: any FileSystem, opened: RootRecord) throws(StorageError) {
        self.layout = layout
        self.fileSystem = fileSystem
        anchorGeneration = opened.generation
        newestWritten = opened.generation
        formatVersion = opened.formatVersion
        let file = try fileSystem.open(layout.root, mode: .readWrite)
        do throws(StorageError) {
            let bytes = try file.readAll()
            namedAtOpen = Set(
                (0..<2).compactMap { try? RootRecord.decodeSlot(bytes, slot: $0, file: layout.root).snapshotFile })
            if RootRecord.isVersionOneLayout(fileLength: bytes.count) {
                file.close()
                // Slot 1 of a version 1 file: the root before the last, perhaps in the file
                // the last compaction replaced, which retention must keep.
                contents = [opened, try? RootRecord.decodeSlot(bytes, slot: 1, file: layout.root)]
                return
            }
            for slot in 0..<2 {
                contents[slot] = try? RootRecord.decodeSlot(bytes, slot: slot, file: layout.root)
                // Compared with `opened` below, which carries the store's version, not its slot's.
                contents[slot]?.formatVersion = opened.formatVersion
                if contents[slot] == nil && !RootRecord.slotIsEmpty(bytes, slot: slot) { foundDamagedSlot = true }
            }
            try file.syncData()
        } catch {
            file.close()
            throw error
        }
        handle = file
        // The anchor is the slot the store opened at (now durable); writes go to the other.
        anchor = contents[1] == opened && contents[0] != opened ? 1 : 0
    }

    /// True while the root file has the version 1 layout (no commit since it was opened).
    var isVersionOneLayout: Bool { handle == nil }

    /// Snapshot files a slot names: retention never removes them, since recovery may start
    /// from either slot.
    var namedFiles: Set<UInt64> { Set(contents.compactMap { $0?.snapshotFile }) }

    /// Rewrites a version 1 root file in the version 2 layout (once, before the first
    /// commit or compaction of a store created by format version 1): `current`, a root in
    /// `file`, in slot 0 with its chain value, slot 1 empty, by temporary file, fsync, rename
    /// and directory fsync. `current` must be durable (it is: the root file named it).
    mutating func upgradeIfNeeded(to current: RootRecord, in file: SnapshotFile) throws(StorageError) {
        guard handle == nil else { return }
        var record = current
        record.chain = try file.chainValue(of: current)
        record.formatVersion = StorageFormat.createdVersion
        try fileSystem.replaceAtomically(
            layout.root, with: RootRecord.encodeFile(current: record),
            temporaryPath: layout.rootTemporary)
        handle = try fileSystem.open(layout.root, mode: .readWrite)
        anchor = 0
        contents = [record, nil]
        knownBytes = [nil, nil]
        unsyncedWrites = 0
        anchorGeneration = record.generation
        newestWritten = record.generation
        formatVersion = record.formatVersion
    }

    /// True if writing `record` raises the store's format version (its first commit that
    /// records a tree wholesale): the caller then syncs that write at once, since
    /// the commit is acknowledged only once a slot of the new version is durable. Before
    /// that, recovery from the older slots would not follow its run (Docs/Format.md §18.2).
    func upgrades(to record: RootRecord) -> Bool { record.formatVersion > formatVersion }

    /// True if writing a root of `generation` would put it ``maximumAnchorLag`` generations
    /// or more ahead of the anchor while the slot written last is unsynced: the caller syncs
    /// first, so that slot becomes the anchor and the write goes to the other one, a
    /// generation or a few ahead of it.
    func syncIsDue(beforeWriting generation: UInt64) -> Bool {
        // A difference, not a sum: generations read from disk can be near UInt64.max.
        unsyncedWrites > 0 && generation >= anchorGeneration
            && generation - anchorGeneration >= Self.maximumAnchorLag
    }

    /// True once the slot written last is ``maximumAnchorLag`` generations ahead of the
    /// anchor: the caller syncs at once, so the lag never passes the bound. After
    /// ``syncIsDue(beforeWriting:)`` this holds only when one write alone covers the bound
    /// (a grouped flush of more commits than that).
    var syncIsDue: Bool {
        // A difference, not a sum: generations read from disk can be near UInt64.max.
        unsyncedWrites > 0 && newestWritten >= anchorGeneration
            && newestWritten - anchorGeneration >= Self.maximumAnchorLag
    }

    /// Writes `record` into the slot that is not the anchor, in place, without a sync (the
    /// caller syncs when ``syncIsDue``). The caller has made `record`'s run durable.
    mutating func write(_ record: RootRecord) throws(StorageError) {
        guard let handle else { preconditionFailure("root slots written before the version 2 upgrade") }
        let slot = 1 - anchor
        // A store's version never goes back: a slot says at least what the other says.
        var record = record
        record.formatVersion = max(record.formatVersion, formatVersion)
        // Invariant: never the anchor (see the type's comment).
        let encoded = record.encodedSlot()
        knownBytes[slot] = nil  // unknown if the write fails part way
        try handle.write(encoded, at: UInt64(slot * RootRecord.slotStride))
        formatVersion = record.formatVersion
        contents[slot] = record
        knownBytes[slot] = encoded
        unsyncedWrites += 1
        newestWritten = record.generation
    }

    /// Makes the last slot written durable; it becomes the anchor.
    mutating func sync() throws(StorageError) {
        guard let handle, unsyncedWrites > 0 else { return }
        try handle.syncData()
        anchor = 1 - anchor
        anchorGeneration = newestWritten
        unsyncedWrites = 0
    }

    /// Writes `record` and makes it durable: the newest root is then the anchor. For roots
    /// that must not wait for the periodic sync: a compaction's (before its replaced file
    /// may go) and recovery's.
    mutating func writeDurably(_ record: RootRecord) throws(StorageError) {
        try sync()  // both slots durable: writing either is safe
        try write(record)
        try sync()
    }

    /// Closes the root file without syncing it (a poisoned store writes nothing more).
    mutating func abandon() {
        handle?.close()
        handle = nil
    }

    /// Syncs (if a write is pending) and closes the root file.
    mutating func close() throws(StorageError) {
        defer {
            handle?.close()
            handle = nil
        }
        try sync()
    }
}

// The root slots read again by a writer that did not write them: what the bytes say about
// which slot is durable, so that this writer keeps the anchor invariant after another
// writer (another process) wrote and synced slots it never saw.
extension RootSlots {
    /// Reads both slots again; returns the newest valid slot's root. If they hold what this
    /// writer last wrote or read, what it knows of the anchor stands; otherwise the anchor
    /// is taken from what they hold. Caller holds the store's writer lock and `rootFileLock`.
    ///
    /// Why the bytes say which slot is durable: a slot is written only while the other one is
    /// durable (the anchor invariant), and the root file is synced *before* a write that
    /// would reach the lag bound (the type's comment), so of two valid slots the older is
    /// always durable, whoever wrote them; the newer one may not be. So:
    /// - two valid slots of different generations: the older is the anchor, the next write
    ///   goes over the newer, and the lag is counted from the older;
    /// - two valid slots of one generation (both written by a compaction or recovery, and
    ///   synced): either is the anchor;
    /// - one valid slot (the other empty, never written since creation or the version 2
    ///   upgrade, which synced the valid one; or torn, and a torn slot is never the
    ///   anchor): the valid one is the anchor;
    /// - two valid slots of different format versions: the newer may be the store's only
    ///   version 3 slot and is not known durable (its writer may have died before the
    ///   upgrade's sync), and overwriting it could lose the version, after which recovery
    ///   from the version 2 slot would not follow the runs that need version 3. So the
    ///   root file is synced first, and the newer slot is the anchor.
    ///
    /// A root file that another writer rewrote from the version 1 layout is opened here.
    ///
    /// A writer runs it at the start of each turn (Store+CatchUp.swift).
    ///
    /// With `glance` (the store's mapping of the root file), slots that still hold the bytes
    /// this writer knows are found so without a read.
    mutating func reload(glance: RootGlance? = nil) throws(StorageError) -> RootRecord {
        if isVersionOneLayout {
            let file = try fileSystem.open(layout.root, mode: .readOnly)
            defer { file.close() }
            let bytes = try file.readAll()
            if RootRecord.isVersionOneLayout(fileLength: bytes.count) {
                let current = try RootRecord.decodeSlot(bytes, slot: 0, file: layout.root)
                contents = [current, try? RootRecord.decodeSlot(bytes, slot: 1, file: layout.root)]
                knownBytes = [nil, nil]
                return current
            }
            handle = try fileSystem.open(layout.root, mode: .readWrite)
        }
        guard let handle else { preconditionFailure("a version 2 root file has a handle") }
        // Through the mapping: the caller holds the store's lock, so no writer is writing a
        // slot while they are compared.
        if let glance, let known = newestIfSlotsHoldKnownBytes({ glance.slot($0, holds: $1) }) { return known }
        let bytes = try handle.read(at: 0, count: RootRecord.fileSize)
        // The slots hold the very bytes this writer last wrote or read: nothing to decode, and
        // nothing changed (the same as the comparison of decoded slots below).
        if bytes.count == RootRecord.fileSize,
            let known = newestIfSlotsHoldKnownBytes({ Self.slotBytes(bytes, $0).elementsEqual($1) })
        {
            return known
        }
        let slots = (0..<2).map { try? RootRecord.decodeSlot(bytes, slot: $0, file: layout.root) }
        guard let newest = slots.compactMap({ $0 }).max(by: { $0.generation < $1.generation }) else {
            throw .corruption(Corruption(file: layout.root, offset: 0, detail: "no usable root slot"))
        }
        // The slots hold what this writer last wrote or read: no other writer wrote since,
        // and what this writer knows (a sync it made, so a newer anchor) still holds.
        // Re-deriving the anchor from the bytes would be right too, but would keep the next
        // writes on one slot until the lag bound.
        if (0..<2).allSatisfy({ Self.sameRoot(slots[$0], contents[$0]) }) {
            // Known by its bytes only where it decodes to exactly what `contents` says (the
            // version a slot says may differ from the store's, which `contents` keeps).
            for slot in 0..<2 where slots[slot] == contents[slot] {
                knownBytes[slot] = Array(Self.slotBytes(bytes, slot))
            }
            return newest
        }
        contents = slots
        knownBytes = (0..<2).map { Array(Self.slotBytes(bytes, $0)) }
        formatVersion = max(formatVersion, slots.compactMap { $0?.formatVersion }.max() ?? formatVersion)
        let newer = slots[1]?.generation == newest.generation && slots[0]?.generation != newest.generation ? 1 : 0
        if let older = slots[1 - newer], older.generation != newest.generation {
            if older.formatVersion != newest.formatVersion {
                try handle.syncData()
                setAnchor(newer, generation: newest.generation, newestWritten: newest.generation, unsynced: 0)
            } else {
                setAnchor(1 - newer, generation: older.generation, newestWritten: newest.generation, unsynced: 1)
            }
        } else {
            // One valid slot, or two of the same generation: the valid (or first) one.
            let only = slots[0] == nil ? 1 : 0
            setAnchor(only, generation: newest.generation, newestWritten: newest.generation, unsynced: 0)
        }
        return newest
    }

    /// The newest root of `contents` if both slots hold the bytes they were known by, as
    /// `holds(slot, known)` says; nil otherwise (a slot not known, or changed).
    private func newestIfSlotsHoldKnownBytes(_ holds: (Int, [UInt8]) -> Bool) -> RootRecord? {
        for slot in 0..<2 {
            guard let known = knownBytes[slot], holds(slot, known) else { return nil }
        }
        return contents.compactMap { $0 }.max(by: { $0.generation < $1.generation })
    }

    /// Slot `slot`'s bytes in a version 2 root file's bytes.
    private static func slotBytes(_ bytes: [UInt8], _ slot: Int) -> ArraySlice<UInt8> {
        let base = slot * RootRecord.slotStride
        return bytes[base..<(base + RootRecord.slotSize)]
    }

    /// What the slots hold now (nil: empty or unusable), with one read of the root file; nil
    /// for a version 1 root file (another writer may have rewritten it). A writer between
    /// turns reads this when the root file changes, before it loads what another writer
    /// committed (Store+Refresh.swift).
    func currentRoots() throws(StorageError) -> [RootRecord?]? {
        guard let handle else { return nil }
        let bytes = try handle.read(at: 0, count: RootRecord.fileSize)
        return (0..<2).map { try? RootRecord.decodeSlot(bytes, slot: $0, file: layout.root) }
    }

    /// Whether `roots` (``currentRoots()``) are what this writer last wrote or read in a
    /// turn, or what it last followed between turns: nothing new to load.
    func areKnown(_ roots: [RootRecord?]) -> Bool {
        func same(_ known: [RootRecord?]) -> Bool { (0..<2).allSatisfy { Self.sameRoot(roots[$0], known[$0]) } }
        return same(contents) || followed.map(same) == true
    }

    /// Records `roots` as followed between turns. Kept apart from `contents`: ``reload()``
    /// keeps its anchor only when the slots hold what this writer wrote or read in a turn,
    /// and slots another writer wrote must not pass for those.
    mutating func noteFollowed(_ roots: [RootRecord?]) {
        followed = roots
    }

    /// Whether two slots hold the same root (both empty or unusable, or the same commit
    /// with the same chain value), whatever format version each says.
    private static func sameRoot(_ a: RootRecord?, _ b: RootRecord?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return a.generation == b.generation && a.location == b.location && a.chain == b.chain
            && a.snapshotFile == b.snapshotFile
    }

    /// The anchor and the lag as ``reload()`` derived them.
    private mutating func setAnchor(_ slot: Int, generation: UInt64, newestWritten newest: UInt64, unsynced: Int) {
        anchor = slot
        anchorGeneration = generation
        newestWritten = newest
        unsyncedWrites = unsynced
    }
}
