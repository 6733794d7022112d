import Synchronization

/// A look at the root file's two slots through a shared mapping (``SharedMapping``): have
/// they changed since this store last adopted what they say? Other processes' commits
/// change them; so do this process's own slot writes, which its turns note as seen. Taken
/// at the start of each read (``Store/followIfRootFileChanged()``), so that a read sees a
/// commit another process made before it, as SQLite's readers do by looking at the WAL
/// index.
///
/// A look reads each slot's generation and checksum (Docs/Format.md §8): a slot written
/// again has a newer generation, or, for another history after damage, which may repeat a
/// generation, other bytes and so another checksum. Six loads and no lock, since a read
/// of a hot record costs a few hundred nanoseconds: a lock and a comparison of the whole
/// slots made such reads 8 % slower. What was last seen lives in atomics: a look that
/// races a ``noteSeen(_:)`` may find a mix of old and new and refresh once more; it cannot
/// find a match the file does not hold, since a slot never returns to older contents.
final class RootGlance: Sendable {
    /// What a look found: each slot's generation and checksum.
    struct Slots: Sendable {
        var generations: (UInt64, UInt64)
        var checksums: UInt64
    }

    private let mapping: SharedMapping
    private let seenFirst = Atomic<UInt64>(0)
    private let seenSecond = Atomic<UInt64>(0)
    private let seenChecksums = Atomic<UInt64>(0)
    /// False until something was seen: the first look always refreshes.
    private let seenAny = Atomic<Bool>(false)

    private static let generationOffset = 16
    private static let checksumOffset = 124

    /// A glance at the root file at `path`; nil unless the file system maps files and the
    /// file has the version 2 layout (a version 1 root file is replaced when upgraded, so a
    /// mapping of it would stop seeing commits: such a store relies on following alone).
    init?(root path: String, fileSystem: any FileSystem) {
        guard let mapper = fileSystem as? any SharedMappingFileSystem,
            let mapping = mapper.mapShared(path, length: RootRecord.fileSize)
        else { return nil }
        self.mapping = mapping
    }

    /// The slots now, if they differ from those last seen; nil if they do not.
    func changedSlots() -> Slots? {
        let now = slotsNow()
        guard seenAny.load(ordering: .acquiring), seenFirst.load(ordering: .relaxed) == now.generations.0,
            seenSecond.load(ordering: .relaxed) == now.generations.1,
            seenChecksums.load(ordering: .relaxed) == now.checksums
        else { return now }
        return nil
    }

    /// Records `slots` (from ``changedSlots()``, taken before the refresh that adopted what
    /// they say) as seen.
    func noteSeen(_ slots: Slots) {
        seenFirst.store(slots.generations.0, ordering: .relaxed)
        seenSecond.store(slots.generations.1, ordering: .relaxed)
        seenChecksums.store(slots.checksums, ordering: .relaxed)
        seenAny.store(true, ordering: .releasing)
    }

    /// Records the slots as they are now as seen: for a writer whose turn still holds the
    /// store's lock and has adopted every other process's commit, so that its own slot
    /// writes send its next read to no refresh.
    func noteSeenNow() {
        noteSeen(slotsNow())
    }

    /// Whether slot `slot` holds exactly `bytes` (a whole slot) now: what a read of the root
    /// file would return, since the mapping and the reads share the page cache.
    func slot(_ slot: Int, holds bytes: [UInt8]) -> Bool {
        mapping.holds(bytes, at: slot * RootRecord.slotStride)
    }

    /// The whole root file now, copied from the mapping: a load of the root without opening,
    /// reading and closing the file, three system calls and a path lookup. A slot being
    /// written may be torn in the copy, as in a read; its checksum tells.
    func rootFileBytes() -> [UInt8] {
        mapping.bytes(at: 0, count: RootRecord.fileSize)
    }

    /// The newest generation the slots name now (a slot being written may show a torn
    /// value; for a hint only).
    func newestGeneration() -> UInt64 {
        let slots = slotsNow()
        return max(slots.generations.0, slots.generations.1)
    }

    private func slotsNow() -> Slots {
        let second = RootRecord.slotStride
        let generations = (
            UInt64(littleEndian: mapping.load(at: Self.generationOffset, as: UInt64.self)),
            UInt64(littleEndian: mapping.load(at: second + Self.generationOffset, as: UInt64.self))
        )
        let first = UInt32(littleEndian: mapping.load(at: Self.checksumOffset, as: UInt32.self))
        let other = UInt32(littleEndian: mapping.load(at: second + Self.checksumOffset, as: UInt32.self))
        return Slots(generations: generations, checksums: UInt64(first) << 32 | UInt64(other))
    }
}
