@testable import FolioStorage

/// Puts the newest root of `before` (an earlier copy of the store's root file) into slot 1
/// of the store's root file. Format version 2 compaction writes its root into both slots;
/// this recreates a root file whose other slot names the file the compaction replaced (as
/// a version 1 store's slot 1 does), for tests of the fallback to such a slot.
func putOlderRoot(from before: [UInt8], intoSlotOneOf path: String, in fileSystem: MemoryFileSystem) throws {
    let older = [0, 1].compactMap { try? RootRecord.decodeSlot(before, slot: $0, file: "root") }
        .max { $0.generation < $1.generation }
    guard let older, var root = fileSystem.contents(of: path) else { return }
    root.replaceSubrange(RootRecord.slotStride..<RootRecord.fileSize, with: older.encodedSlot())
    fileSystem.setContents(root, of: path)
}
