import Testing
@testable import FolioStorage
import FolioTestSupport

/// A1: the exact sequence of file-system calls of every kind of commit, through the
/// recording seam, against the numbered protocols of Docs/Durability.md (§1 commit, §1.2
/// grouped flush, §1.3 compaction, §2 creation, §3 writer open and recovery).
///
/// The sequences list every call that changes bytes or names or makes them durable, plus
/// opens (with their mode) and locks; reads, sizes and listings are left out. Writes to
/// the snapshot file are also checked to land exactly at and after the committed end
/// (nothing committed is ever overwritten, Docs/Architecture.md invariant 1).
@Suite struct CommitCallOrderTests {
    static let kinds: Set<FileOperation.Kind> = FileOperation.Kind.durabilityRelevant.union([
        .open, .lock, .openLockFile, .tryLock,
    ])
    static let file1 = "snapshots/0000000000000001.folio"
    static let file2 = "snapshots/0000000000000002.folio"

    /// The calls since the last reset: `open root.tmp (truncate)`, `write root.tmp`, ...
    func trace(_ recording: RecordingFileSystem) -> [String] {
        recording.operations.filter { Self.kinds.contains($0.kind) }.map { operation in
            let relative = operation.relative(to: "/stores/s")
            if case .open = relative { return relative.description }
            if case .truncate = relative { return relative.description }
            return relative.summary
        }
    }

    /// The snapshot-file writes since the last reset, as (offset, count).
    func snapshotWrites(_ recording: RecordingFileSystem, file: String = file1) -> [(offset: UInt64, count: Int)] {
        recording.operations.compactMap { operation in
            if case .write(let path, let offset, let count) = operation, path == "/stores/s/\(file)" {
                return (offset, count)
            }
            return nil
        }
    }

    /// Checks that `writes` cover `start..<end` exactly, in order, with no gap or overlap.
    func expectContiguous(
        _ writes: [(offset: UInt64, count: Int)], from start: UInt64, to end: UInt64,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var position = start
        for write in writes {
            #expect(
                write.offset == position, "a write at \(write.offset), expected \(position)",
                sourceLocation: sourceLocation)
            position = write.offset + UInt64(write.count)
        }
        #expect(position == end, "writes end at \(position), the commit at \(end)", sourceLocation: sourceLocation)
    }

    /// The root file's slots: the newest valid one, and the other (nil if empty or invalid).
    func root(_ fileSystem: MemoryFileSystem) throws -> (current: RootRecord, other: RootRecord?) {
        let bytes = fileSystem.contents(of: "/stores/s/root")!
        let slots = (0..<2).map { try? RootRecord.decodeSlot(bytes, slot: $0, file: "root") }
        let newest = (slots[1]?.generation ?? 0) > (slots[0]?.generation ?? 0) ? 1 : 0
        return (try #require(slots[newest]), slots[1 - newest])
    }

    /// The offsets of root slot writes since the last reset.
    func slotWrites(_ recording: RecordingFileSystem) -> [UInt64] {
        recording.operations.compactMap { operation in
            if case .write(let path, let offset, _) = operation, path == "/stores/s/root" { return offset }
            return nil
        }
    }

    /// The writer-open tail shared by creation and reopening (§3): read the info and root
    /// files, open the snapshot file for writing, open the root file for writing and sync it
    /// (whichever slot the last writer left unsynced is durable before the other is
    /// written), then sync the store directory.
    static let openTail = [
        "open info (readOnly)", "open root (readOnly)", "open \(file1) (readWrite)",
        "open root (readWrite)", "sync root", "syncdir .",
    ]

    /// §2: creating a store. Every step is durable before the next: the store directory
    /// (its parent synced), the lock, `snapshots/` (the store directory synced), snapshot file
    /// 1 (synced, `snapshots/` synced), the info file and then the root file by atomic
    /// replacement; then the writer open of §3.
    @Test func creation() throws {
        let fileSystem = try memoryFileSystem()
        let recording = RecordingFileSystem(wrapping: fileSystem)
        let store = try Store.open(at: "/stores/s", options: testOptions(recording))
        #expect(
            trace(recording) == [
                "mkdir .", "syncdir /stores",
                "openLockFile lock", "tryLock lock",
                "mkdir snapshots", "syncdir .",
                "open \(Self.file1) (truncate)", "write \(Self.file1)", "sync \(Self.file1)", "syncdir snapshots",
                "open info.tmp (truncate)", "write info.tmp", "sync info.tmp", "rename info.tmp→info", "syncdir .",
                "open root.tmp (truncate)", "write root.tmp", "sync root.tmp", "rename root.tmp→root", "syncdir .",
            ] + Self.openTail)
        // The snapshot file is written whole from offset 0: header and creation commit.
        expectContiguous(snapshotWrites(recording), from: 0, to: 168)
        #expect(try root(fileSystem).current.generation == 1)
        #expect(try root(fileSystem).other == nil, "slot 1 is empty until the first commit")
        #expect(fileSystem.contents(of: "/stores/s/root")!.count == RootRecord.fileSize)
        #expect(store.verify().isClean)
        store.close()
    }

    /// §1: a transaction commit in full durability (format version 2). Append the run
    /// after the committed end (and zeros past it, the first time the file grows), fdatasync
    /// the snapshot file once, write the root slot in place: nothing else, in exactly this
    /// order. The slot written is never the one that held the durable root before.
    @Test(arguments: [false, true])
    func transactionCommit(large: Bool) throws {
        let fileSystem = try memoryFileSystem()
        let recording = RecordingFileSystem(wrapping: fileSystem)
        let store = try Store.open(at: "/stores/s", options: testOptions(recording))
        try write(sampleModel(count: 300, seed: 1), to: store)
        let before = try root(fileSystem)
        recording.reset()
        try store.write { txn in
            try txn.put(bytes("changed"), for: bytes("key-7"), in: "first")
            // A value over 2 MiB: the pages go out in several append chunks.
            if large { try txn.put([UInt8](repeating: 7, count: 2_500_000), for: bytes("large"), in: "first") }
        }
        let after = try root(fileSystem)
        let writes = snapshotWrites(recording)
        // The lock first: an idle writer holds none, and takes it for its turn.
        #expect(
            trace(recording) == ["tryLock lock"] + Array(repeating: "write \(Self.file1)", count: writes.count) + [
                "sync \(Self.file1)", "write root",
            ])
        // The run, contiguous from the committed end; any other write is preallocation, after it.
        let run = writes.filter { $0.offset < after.current.committedLength }
        #expect(large ? run.count >= 2 : run.count == 1)
        expectContiguous(run, from: before.current.committedLength, to: after.current.committedLength)
        #expect(writes.allSatisfy { $0.offset >= before.current.committedLength }, "nothing committed is written again")
        #expect(after.current.generation == before.current.generation + 1)
        // The anchor (the slot synced at open: creation's root) is never written; the free
        // slot holds each commit's root in turn until the root file's periodic sync.
        #expect(after.other == before.other, "the anchor slot is not written")
        #expect(slotWrites(recording).count == 1)
        #expect(store.verify().isClean)
        store.close()
    }

    /// §1 step 4: the root file is synced before the slot write that would put the slot 64
    /// generations past the anchor, never after it, so the older slot is always the durable
    /// one. Commits 1-63 past the open's anchor write the lazy slot only; the 64th syncs the
    /// root file (the slot of the 63rd becomes the anchor), then writes the other slot,
    /// over the open's root; the next 62 write that slot only.
    @Test func theRootFileIsSyncedBeforeTheSlotWriteThatReachesTheBound() throws {
        let fileSystem = try memoryFileSystem()
        let recording = RecordingFileSystem(wrapping: fileSystem)
        let store = try Store.open(at: "/stores/s", options: testOptions(recording))
        let opened = try root(fileSystem).current
        var traces: [[String]] = []
        var slots: [[UInt64]] = []
        for i in 0..<(2 * 63 + 1) {
            recording.reset()
            try store.write { try $0.put([UInt8(i % 256)], for: [UInt8(i % 256), 7], in: "t") }
            traces.append(trace(recording).filter { !$0.hasPrefix("write \(Self.file1)") })
            slots.append(slotWrites(recording))
        }
        // Each commit is a turn of its own: the lock, then the protocol.
        let plain = ["tryLock lock", "sync \(Self.file1)", "write root"]
        let syncedFirst = ["tryLock lock", "sync \(Self.file1)", "sync root", "write root"]
        for (index, calls) in traces.enumerated() {
            let generation = opened.generation + UInt64(index) + 1
            // Due at 64 past the open's anchor, then at 64 past the new anchor (63 + 64).
            let due = generation - opened.generation == 64 || generation - opened.generation == 127
            #expect(calls == (due ? syncedFirst : plain), "commit \(index + 1)")
        }
        // Each sync switches the slot written: the 63rd's slot became the anchor.
        #expect(Set(slots[0..<63].joined()).count == 1)
        #expect(Set(slots[63..<126].joined()).count == 1)
        #expect(slots[62] != slots[63] && slots[125] != slots[126])
        let bytes = fileSystem.contents(of: "/stores/s/root")!
        let generations = (0..<2).compactMap { try? RootRecord.decodeSlot(bytes, slot: $0, file: "root").generation }
        #expect(Set(generations) == [opened.generation + 126, opened.generation + 127])
        #expect(store.verify().isClean)
        store.close()
    }

    /// Format version 3 (Format.md §18.2): the first commit that records a tree wholesale
    /// in a version 2 store writes its slot, saying 3, and syncs the root file before it
    /// returns; that slot is the anchor, so the next commit's slot goes into the other one
    /// (the last that said 2), with no sync of its own.
    @Test func theVersionThreeUpgradeCommit() throws {
        let fileSystem = try memoryFileSystem()
        let recording = RecordingFileSystem(wrapping: fileSystem)
        var options = testOptions(recording)
        options.changeRecordKeyLimit = 2
        let store = try Store.open(at: "/stores/s", options: options)
        try store.write { try $0.put([1], for: [1], in: "t") }
        recording.reset()
        try store.write { txn in for key in 0..<3 { try txn.put([2], for: [UInt8(key)], in: "t") } }
        var writes = snapshotWrites(recording).count
        #expect(
            trace(recording) == ["tryLock lock"] + Array(repeating: "write \(Self.file1)", count: writes) + [
                "sync \(Self.file1)", "write root", "sync root",
            ])
        let upgraded = slotWrites(recording)
        recording.reset()
        try store.write { try $0.put([3], for: [1], in: "t") }
        writes = snapshotWrites(recording).count
        #expect(
            trace(recording) == ["tryLock lock"] + Array(repeating: "write \(Self.file1)", count: writes) + [
                "sync \(Self.file1)", "write root",
            ])
        #expect(slotWrites(recording) != upgraded, "the upgrade's slot is the anchor")
        let bytes = fileSystem.contents(of: "/stores/s/root")!
        #expect((0..<2).map { try? RootRecord.decodeSlot(bytes, slot: $0, file: "root").formatVersion } == [3, 3])
        #expect(store.verify().isClean)
        store.close()
    }

    /// §1.2: grouped durability. Each commit only appends (no sync, no slot write); the
    /// flush then syncs the snapshot file once for all of them and writes the newest root
    /// into the free slot.
    @Test func groupedFlush() throws {
        let fileSystem = try memoryFileSystem()
        let recording = RecordingFileSystem(wrapping: fileSystem)
        let store = try Store.open(
            at: "/stores/s", options: testOptions(recording, durability: .grouped(window: .seconds(3600))))
        try store.write { try $0.put([0], for: [0], in: "t") }
        try store.flush()
        let durable = try root(fileSystem).current
        recording.reset()
        for i in 1...3 { try store.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        let writes = snapshotWrites(recording)
        // The first commit takes the lock; it is held until the flush (commits are pending).
        #expect(trace(recording) == ["tryLock lock"] + Array(repeating: "write \(Self.file1)", count: writes.count))
        #expect(try root(fileSystem).current == durable, "the root file does not change before the flush")
        #expect(
            store.verify().isClean, "a root file that lags the published commits is grouped mode working, not a problem"
        )
        recording.reset()
        try store.flush()
        #expect(trace(recording) == ["sync \(Self.file1)", "write root"])
        let flushed = try root(fileSystem)
        expectContiguous(
            writes.filter { $0.offset < flushed.current.committedLength },
            from: durable.committedLength, to: flushed.current.committedLength)
        #expect(flushed.current.generation == durable.generation + 3)
        recording.reset()
        try store.flush()
        #expect(trace(recording).isEmpty, "a flush with nothing pending does nothing")
        #expect(store.verify().isClean)
        store.close()
    }

    /// §1.3: compaction. The compaction lock is taken first, and the store's lock only for
    /// the turns before the copy, between passes and for the catch-up. The copy is written and synced, and its directory entry synced,
    /// before the catch-up; the catch-up's pages (at least the catalog and the commit page)
    /// are written and synced before the root switches: the root file synced (the last
    /// commit's slot becomes durable), the new root written into the other slot and synced,
    /// then into the first slot too and synced (both slots name the new file).
    /// The replaced file is removed only after that (here at once: a zero grace period),
    /// and never written.
    @Test func compaction() throws {
        let fileSystem = try memoryFileSystem()
        let recording = RecordingFileSystem(wrapping: fileSystem)
        let store = try Store.open(at: "/stores/s", options: testOptions(recording))
        try write(sampleModel(count: 300, seed: 2), to: store)
        let before = try root(fileSystem).current
        recording.reset()
        try store.compact()
        let after = try root(fileSystem)
        let steps = trace(recording)
        let copyWrites = steps.dropFirst(4).prefix { $0 == "write \(Self.file2)" }.count
        let catchUpWrites = snapshotWrites(recording, file: Self.file2).count - copyWrites
        #expect(copyWrites >= 2 && catchUpWrites >= 1, "the header and the trees, then the catalog and commit")
        #expect(
            steps == [
                // The compaction lock, then a turn's try to catch up before the copy.
                "openLockFile compaction.lock", "tryLock compaction.lock", "tryLock lock",
                "open \(Self.file2) (truncate)",
            ]
                + Array(repeating: "write \(Self.file2)", count: copyWrites) + [
                    // A try between passes (no lock held while copying), then the copy
                    // synced, then the catch-up's turn.
                    "tryLock lock", "sync \(Self.file2)", "syncdir snapshots", "tryLock lock",
                ] + Array(repeating: "write \(Self.file2)", count: catchUpWrites) + [
                    "sync \(Self.file2)",
                    "sync root", "write root", "sync root", "write root", "sync root",
                    "remove \(Self.file1)",
                ])
        expectContiguous(snapshotWrites(recording, file: Self.file2), from: 0, to: after.current.committedLength)
        #expect(snapshotWrites(recording).isEmpty, "the old file is never written")
        #expect(after.current.snapshotFile == 2 && after.current.generation == before.generation + 1)
        #expect(after.other == after.current, "both slots name the compaction's root")
        #expect(store.verify().isClean)
        store.close()
    }

    /// §3: opening for writing. A clean store: lock, read, open the snapshot file and the
    /// root file for writing, sync the root file, sync the store directory. After a crash
    /// that left garbage past the last commit, a `root.tmp` and an orphan snapshot file: the
    /// same, nothing truncated, `root.tmp` removed after the directory sync, then a newer
    /// snapshot file whose header is not a snapshot header removed (a compaction interrupted
    /// before its header; a newer file with a valid header is kept, see EngineEdgeTests).
    /// After a crash between a run's sync and its slot write: the run is followed, synced
    /// and recorded in a slot, synced, after the directory sync.
    @Test func writerOpenAndRecovery() throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        try write(sampleModel(count: 100, seed: 3), to: store)
        let rootBefore = fileSystem.contents(of: "/stores/s/root")!
        let generation = store.generation
        try store.write { try $0.put([1], for: [1], in: "after") }
        store.close()

        let recording = RecordingFileSystem(wrapping: fileSystem)
        try Store.open(at: "/stores/s", options: testOptions(recording)).close()
        #expect(trace(recording) == ["openLockFile lock", "tryLock lock"] + Self.openTail)

        // What a crash leaves: a garbage tail, a written root.tmp, an orphan snapshot file.
        let path = "/stores/s/\(Self.file1)"
        let length = fileSystem.contents(of: path)!.count
        fileSystem.setContents(fileSystem.contents(of: path)! + [UInt8](repeating: 0xAB, count: 5000), of: path)
        fileSystem.setContents([UInt8](repeating: 1, count: 256), of: "/stores/s/root.tmp")
        fileSystem.setContents([UInt8](repeating: 2, count: 900), of: "/stores/s/snapshots/0000000000000003.folio")
        recording.reset()
        let recovered = try Store.open(at: "/stores/s", options: testOptions(recording))
        #expect(
            trace(recording) == ["openLockFile lock", "tryLock lock"] + Self.openTail + [
                "remove root.tmp",
                // A newer file is touched only holding the compaction lock (it could be
                // another process's copy in progress), and goes only if it is provably no
                // snapshot: its header is read first.
                "openLockFile compaction.lock", "tryLock compaction.lock",
                "open snapshots/0000000000000003.folio (readOnly)", "remove snapshots/0000000000000003.folio",
            ])
        #expect(fileSystem.contents(of: path)!.count == length + 5000, "nothing is truncated")
        #expect(recovered.generation == generation + 1)
        #expect(recovered.verify().isClean)
        recovered.close()

        // The slots put back to before the last commit: its run is found and recorded.
        fileSystem.setContents(rootBefore, of: "/stores/s/root")
        recording.reset()
        let followed = try Store.open(at: "/stores/s", options: testOptions(recording))
        #expect(
            trace(recording) == ["openLockFile lock", "tryLock lock"] + Self.openTail + [
                "sync \(Self.file1)", "write root", "sync root",
            ])
        #expect(followed.generation == generation + 1)
        #expect(try root(fileSystem).current.generation == generation + 1)
        #expect(followed.verify().isClean)
        followed.close()
    }
}
