// The checks of what lies past the root a read-only store opened at: the complete runs a
// writer's open will recover, and a damaged run that will cut off the runs after it.

extension TreeVerifier {
    /// Follows the complete runs past `record` (the root slot a read-only store opened at)
    /// as a writer's recovery would, without writing anything (Docs/Durability.md §1.5):
    /// complete runs are a note (the lag the format allows: a writer's next open adopts
    /// them), a damaged run that later complete runs chain to is a problem naming the
    /// generations recovery will lose. Version 1 root files are skipped (nothing past a
    /// version 1 root was committed).
    mutating func checkRunsPastRoot(
        _ record: RootRecord, layout: StoreLayout, fileSystem: any FileSystem,
        notes: inout [VerificationNote]
    ) {
        do throws(StorageError) {
            let root = try fileSystem.open(layout.root, mode: .readOnly)
            let rootLength = try root.size()
            root.close()
            guard !RootRecord.isVersionOneLayout(fileLength: Int(clamping: rootLength)) else { return }
            let (last, runs) = try RunRecovery.followRuns(from: record, chain: record.chain, in: pages.file)
            if runs > 0 {
                let range =
                    runs == 1
                    ? "generation \(last.generation)" : "generations \(record.generation + 1)-\(last.generation)"
                notes.append(
                    VerificationNote(
                        file: file, offset: record.committedLength,
                        detail: "pending recovery: \(range) lie in complete runs past the newest root slot (generation "
                            + "\(record.generation)); a writer's next open adopts them, and until then readers see generation "
                            + "\(record.generation)"))
            }
            // Looked at twice: on a store another process is writing, a page read while its
            // write was under way fails its checksum, and the run can be complete by the time
            // the walk reaches its commit page. Real damage is there both times.
            if let damage = try RunRecovery.damagedRun(after: last, in: pages.file),
                try RunRecovery.damagedRun(after: last, in: pages.file) == damage
            {
                problem(damage.offset, nil, damage.description)
            }
        } catch {
            problem(error, tree: nil, at: record.committedLength)
        }
    }
}
