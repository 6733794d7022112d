// The compaction lock: which process may copy into a new snapshot file (Docs/Durability.md
// §1.6, Docs/Format.md §2 and §17).
//
// A compaction copies for seconds without the store's lock (`lock`), so that other
// processes' writes go on; what it must still exclude during the copy is another process
// touching the file it copies into: compacting into the same new number (both would write
// one file), or, at a writer's open, reclaiming it as an interrupted compaction's copy
// (Store+Retention.swift). So the rule: **a snapshot file numbered above the current one is
// created, written, truncated, replaced or removed only by a holder of the compaction
// lock**, an exclusive `flock` on `compaction.lock` in the store directory. A compaction
// takes it before it picks its number and lets it go only once its file is either named by
// both root slots or removed; an open that finds a file above the current one acts on it
// only holding it (a try: if another process holds it, the file is that process's copy in
// progress, and stays). A killed holder's lock goes with its process, so the copy it left
// is reclaimed by the next writer open, as before.
//
// Why a file of its own and `flock`, not a byte-range lock on `lock`:
// - `flock` is what the store's lock already is (Architecture.md: POSIX `fcntl` locks are
//   released by any close of the file in the process), and it exists on every platform
//   Folio runs on. Open file description (OFD) byte-range locks, which would not have that
//   flaw, are Linux only; Darwin has none.
// - On Linux `flock` and `fcntl` locks of one file are independent, except over NFS and
//   some FUSE file systems, where the kernel emulates `flock` with a whole-file `fcntl`
//   lock: there a byte-range lock on `lock` would conflict with the writer's turn lock, and
//   a compaction copying would keep every other writer out again.
// - A lock file of its own cannot be mistaken for the turn: tools and tests that look at
//   `lock` (`/proc/locks`, a non-blocking `flock` from another process) still see only turns.
//
// Order, so that no two waits form a cycle: the compaction lock is waited for (a manual
// compaction, up to the busy timeout) only by a compaction thread that holds no turn; the
// store's lock may then be waited for while holding it (the compaction's turns), never the
// other way round (an open only tries the compaction lock, once, holding the store's).
//
// The file is created by the first compaction (or the first open that finds a file above
// the current one), not at every open: a store that never compacted keeps its directory as
// it was, and a writer's open makes no extra system call in the common case.

extension Store {
    /// Takes the compaction lock: once if `waitingUpTo` is nil (nil if another process holds
    /// it: an automatic compaction skips), otherwise waiting up to that long (pausing as a
    /// writer waits for a turn), then throwing `StorageError.lockedByAnotherWriter(path:)`
    /// naming `compaction.lock`. Stops waiting with `StorageError.closed(path:)` once
    /// `stop` is set. The caller releases it with `close()`.
    func takeCompactionLock(
        waitingUpTo timeout: Duration?, stop: CompactionStop?
    ) throws(StorageError) -> (any LockFile)? {
        let file = try fileSystem.openLockFile(layout.compactionLock)
        var wait = LockWait(timeout: timeout ?? .zero)
        do throws(StorageError) {
            while true {
                if stop?.isStopped == true { throw .closed(path: path) }
                if try file.tryLock() { return file }
                guard timeout != nil else {
                    file.close()
                    return nil
                }
                guard let pause = wait.nextPause() else { throw .lockedByAnotherWriter(path: layout.compactionLock) }
                LockWait.sleep(pause)
            }
        } catch {
            file.close()
            throw error
        }
    }
}
