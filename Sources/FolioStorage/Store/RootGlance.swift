#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// A look at the root file's two slots through a shared mapping (``SharedMapping``): have
/// they changed since this store last adopted what they say? Other processes' commits
/// change them; so do this process's own slot writes, which its turns note as seen. Taken
/// at the start of each read (``Store/followIfRootFileChanged()``), so that a read sees a
/// commit another process made before it, as SQLite's readers do by looking at the WAL
/// index. When nothing changed a look compares 256 bytes of memory, with no system call.
///
/// Lock order: `seen` is taken under the store's `state` (a turn's end) and takes nothing.
final class RootGlance: Sendable {
    private let mapping: SharedMapping
    /// Both slots' bytes as last seen adopted, slot 0 then slot 1 (empty until the first
    /// look, which therefore refreshes once).
    private let seen = Mutex<[UInt8]>([])

    private static let slotSize = RootRecord.slotSize
    private static let ranges = [0..<slotSize, RootRecord.slotStride..<(RootRecord.slotStride + slotSize)]

    /// A glance at the root file at `path`; nil unless the file system maps files and the
    /// file has the version 2 layout (a version 1 root file is replaced when upgraded, so a
    /// mapping of it would stop seeing commits: such a store relies on following alone).
    init?(root path: String, fileSystem: any FileSystem) {
        guard let mapper = fileSystem as? any SharedMappingFileSystem,
            let mapping = mapper.mapShared(path, length: RootRecord.fileSize)
        else { return nil }
        self.mapping = mapping
    }

    /// The slots' bytes now, if they differ from those last seen; nil if they do not.
    func changedSlots() -> [UInt8]? {
        let same = seen.withLock { seen -> Bool in
            guard seen.count == 2 * Self.slotSize else { return false }
            return seen.withUnsafeBytes { seen in
                Self.ranges.enumerated().allSatisfy { index, range in
                    mapping.withBytes(range) { now in
                        memcmp(seen.baseAddress! + index * Self.slotSize, now.baseAddress!, Self.slotSize) == 0
                    }
                }
            }
        }
        return same ? nil : slotsNow()
    }

    /// Records `slots` (from ``changedSlots()``, taken before the refresh that adopted what
    /// they say) as seen.
    func noteSeen(_ slots: [UInt8]) {
        seen.withLock { $0 = slots }
    }

    /// Records the slots as they are now as seen: for a writer whose turn still holds the
    /// store's lock and has adopted every other process's commit, so that its own slot
    /// writes send its next read to no refresh.
    func noteSeenNow() {
        noteSeen(slotsNow())
    }

    private func slotsNow() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2 * Self.slotSize)
        for range in Self.ranges { mapping.withBytes(range) { bytes.append(contentsOf: $0) } }
        return bytes
    }
}
