// Steps 2-4 of the commit protocol (Docs/Durability.md §1): the snapshot file's sync and
// the root slot write, each of which poisons the store when it fails.
extension Store {
    /// fdatasyncs a snapshot file: step 2, the one sync of a commit. A failure poisons the
    /// store (never retry a sync).
    func syncSnapshot(_ file: SnapshotFile) throws(StorageError) {
        do throws(StorageError) {
            try file.handle.syncData()
            counters.recordCommitSync()
        } catch {
            poison("fdatasync of \(file.path) failed: \(error)")
            throw error
        }
    }

    /// Step 3: writes `record`, whose run is durable, into the free root slot. Upgrades a
    /// version 1 root file first (once), to `durable`, the root the file names, in `file`.
    /// Caller holds `rootFileLock`. A failure poisons: the run is durable, so only a reopen
    /// can tell what the newest root is.
    ///
    /// The first slot of format version 3 (a commit that records a tree wholesale, in a
    /// version 2 store) is synced before this returns, and a failure of that sync fails the
    /// commit: until it is durable, recovery starts from version 2 slots, which follow no
    /// run recording a tree wholesale (Docs/Format.md §18.2).
    func writeRootSlot(
        _ record: RootRecord, durable: RootRecord, in file: SnapshotFile,
        slots: inout RootSlots?
    ) throws(StorageError) {
        guard slots != nil else { throw StorageError.closed(path: path) }
        // Step 4 first, when due: the root file sync that keeps the anchor within
        // RootSlots.maximumAnchorLag generations of the newest slot runs before the write
        // that would reach the bound, so the older slot is always the durable one
        // (RootSlots argues why). Its failure is the slot write's: it poisons and fails the
        // commit, whose slot is then never written (so nothing says the root file holds it,
        // and a commit that raises the store to version 3 is never acknowledged without a
        // durable version 3 slot); the run is durable, so the reopen may recover the commit.
        if slots!.syncIsDue(beforeWriting: record.generation) {
            do throws(StorageError) {
                try slots!.sync()
            } catch {
                poison("syncing the root file failed: \(error)")
                throw error
            }
        }
        do throws(StorageError) {
            try slots!.upgradeIfNeeded(to: durable, in: file)
            let upgrades = slots!.upgrades(to: record)
            try slots!.write(record)
            // The first version 3 slot becomes the anchor at once (a write in place, like any
            // slot write, so the anchor it replaces in the other slot is never touched).
            if upgrades { try slots!.sync() }
        } catch {
            poison("writing the root slot failed: \(error)")
            throw error
        }
        // Invariant: the anchor is never more than RootSlots.maximumAnchorLag generations
        // behind the newest slot written. A write that alone covers the bound (a grouped
        // flush of more commits) reaches it with nothing to sync before it, so it is synced
        // at once. The commit is durable already, so a failure here does not fail it: it
        // poisons, and the next open recovers.
        if slots!.syncIsDue {
            do throws(StorageError) {
                try slots!.sync()
            } catch {
                poison("syncing the root file failed: \(error)")
            }
        }
    }
}
