/// Which root slot a replica opens at, decided from its root file and the lengths of its
/// snapshot files alone, as a reader decides (Docs/Format.md §8): the candidate with the
/// higher generation (slot 0 on a tie) whose snapshot file is there and long enough. The
/// replicator resumes from it and the directory keeps it as the anchor, so the two agree
/// on which slot the next publish may overwrite.
enum ReplicaRoots {
    static func usable(
        _ rootFile: [UInt8], file: String, snapshots: [UInt64: UInt64]
    ) -> (
        slot: Int, record: RootRecord
    )? {
        guard rootFile.count == RootRecord.fileSize else { return nil }
        var candidates: [(slot: Int, record: RootRecord)] = []
        for slot in 0..<2 where !RootRecord.slotIsEmpty(rootFile, slot: slot) {
            if let record = try? RootRecord.decodeSlot(rootFile, slot: slot, file: file) {
                candidates.append((slot, record))
            }
        }
        candidates.sort { ($0.record.generation, 1 - $0.slot) > ($1.record.generation, 1 - $1.slot) }
        return candidates.first { candidate in
            (snapshots[candidate.record.snapshotFile] ?? 0) >= candidate.record.committedLength
        }
    }
}
