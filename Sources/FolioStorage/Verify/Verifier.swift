// Verifying a store: ``Store/verify(progress:)``, the order of its checks. The checks are
// TreeVerifier's: its state in TreeVerifier.swift, each group of checks in a
// TreeVerifier+<What>.swift.

extension Store {
    /// Checks the newest generation from the root file down: every page's checksum, kind and
    /// length; every tree's key order, separator fences, equal leaf depth and page size
    /// bounds; key counts and byte totals against the catalog; that no two reachable pages
    /// overlap and that live bytes match the root; the commit chain back to the start of
    /// the current snapshot file. Reads only: safe beside a writer in another process.
    ///
    /// On a read-only store it also looks past the root slot it opened at, as a writer's
    /// recovery would: complete runs there are reported in ``VerificationReport/notes``
    /// (pending recovery, not a problem), and a damaged run that later complete runs chain
    /// to is a problem naming the generations recovery will lose (Docs/Durability.md §1.5).
    public func verify(progress: ((VerificationProgress) -> Void)? = nil) -> VerificationReport {
        let root: CommittedRoot
        do throws(StorageError) {
            root = try read().root
        } catch {
            return VerificationReport(
                generation: 0,
                problems: [
                    VerificationProblem(
                        file: layout.root, offset: 0, tree: nil,
                        detail: "\(error)")
                ],
                pagesChecked: 0, bytesChecked: 0, treesChecked: 0, commitsChecked: 0)
        }
        var verifier = TreeVerifier(pages: root.pages, total: root.record.liveBytes, progress: progress)
        // A grouped-mode writer publishes commits before the root file names them
        // (Docs/Durability.md §1.2): the root file must hold at least the newest durable
        // root, not the newest published one. Readers and full durability: the same root.
        let durable = state.withLock { $0.writer?.durableRecord } ?? root.record
        verifier.checkRootFile(layout: layout, fileSystem: fileSystem, durable: durable)
        if root.openedFromPreviousSlot {
            verifier.checkUnusableCurrentSlot(root.record, layout: layout, fileSystem: fileSystem)
        }
        verifier.checkFile(root.record)
        verifier.checkTrees(root.record)
        verifier.checkCommitChain(root.record)
        // A writer's open recovered whatever lay past its slot (and logged a damaged run);
        // a read-only store says what that open will find.
        var notes: [VerificationNote] = []
        if isReadOnly { verifier.checkRunsPastRoot(root.record, layout: layout, fileSystem: fileSystem, notes: &notes) }
        return VerificationReport(
            generation: root.record.generation, problems: verifier.problems,
            pagesChecked: verifier.pagesChecked, bytesChecked: verifier.bytesChecked,
            treesChecked: verifier.treesChecked, commitsChecked: verifier.commitsChecked,
            notes: notes)
    }
}
