import FolioStorage

// Building crash images from a power-loss file system: which unsynced writes survive,
// reordered or torn, under each CrashMode.
extension PowerLossFileSystem {
    /// The file system as it could be found after a power cut now, per `mode` (see
    /// ``CrashMode``): a fresh ``MemoryFileSystem`` holding no locks. `rng` drives the
    /// ``CrashMode/random`` choices (the other modes do not use it), so a seeded generator
    /// reproduces an image exactly.
    ///
    /// In ``CrashMode/random`` mode the namespace is the durable one plus each pending
    /// namespace operation kept or dropped at random, applied in issue order, skipping any
    /// that no longer applies (a rename or unlink whose file is not there, a creation whose
    /// name is taken). Each file then holds its durable bytes plus its pending writes and
    /// truncates in a random order: each write whole, dropped or torn (only some of its
    /// 512-byte-aligned sectors applied), each truncate kept or dropped. Files whose directory
    /// is missing are not in the image.
    ///
    /// With `tearingSectors`, a torn write's sectors may tear too, in ``CrashMode/random``:
    /// a sector then holds a prefix of the new bytes over the old ones, as a device without
    /// atomic sector writes leaves it (a root slot is 128 bytes inside one sector).
    public func crashImage(
        using rng: inout some RandomNumberGenerator, mode: CrashMode,
        tearingSectors: Bool = false
    ) -> MemoryFileSystem {
        let (durable, live, pendingNames, files) = state.withLock { state in
            (state.durable, state.live, state.pendingNames, state.inodes.mapValues(\.data))
        }
        var namespace: PowerLossNamespace
        switch mode {
        case .durableOnly: namespace = durable
        case .everything: namespace = live
        case .random:
            namespace = durable
            for operation in pendingNames where Bool.random(using: &rng) {
                namespace.apply(operation)
            }
        }
        namespace = namespace.reachable()

        let image = MemoryFileSystem()
        for directory in namespace.directories.sorted() {
            do {
                try image.createDirectory(directory)
            } catch {
                preconditionFailure("crash image: cannot create \(directory): \(error)")
            }
        }
        // One draw per inode, in inode order, so that a seed gives the same image every time.
        var contents: [UInt64: [UInt8]] = [:]
        for inode in Set(namespace.files.values).sorted() {
            contents[inode] = files[inode]?.crashContents(mode: mode, tearingSectors: tearingSectors, using: &rng) ?? []
        }
        for (path, inode) in namespace.files.sorted(by: { $0.key < $1.key }) {
            image.setContents(contents[inode] ?? [], of: path)
        }
        return image
    }

    /// ``crashImage(using:mode:tearingSectors:)`` with a ``SplitMix64`` generator seeded with `seed`.
    public func crashImage(mode: CrashMode, seed: UInt64 = 0, tearingSectors: Bool = false) -> MemoryFileSystem {
        var rng = SplitMix64(seed: seed)
        return crashImage(using: &rng, mode: mode, tearingSectors: tearingSectors)
    }
}
