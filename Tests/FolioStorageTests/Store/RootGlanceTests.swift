import Testing
import Foundation
import FolioTestSupport
@testable import FolioStorage

/// The look at the root file's slots that reads take first (``RootGlance``,
/// ``Store/followIfRootFileChanged()``). These stores do not follow (no watch), so what
/// they know of another process's commit comes from the glance alone. Timeline: this
/// process opens the store → an `acked-writer` child commits once and exits → a glance
/// adopts its commit.
@Suite(.serialized) struct RootGlanceTests {
    @Test func aWriterBetweenTurnsAdoptsAnotherProcesssCommitAtItsNextLook() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        try store.write { try $0.put([1], for: [1], in: "t") }
        // Its own commit changed the slots, and its turn noted them: nothing to look at.
        store.followIfRootFileChanged()
        #expect(store.rootGlance?.changedSlots() == nil, "a writer's own slot write needs a look")

        let other = try Self.commitInAnotherProcess(at: path)
        #expect(store.generation < other, "the store followed without a look")
        #expect(store.rootGlance?.changedSlots() != nil)
        store.followIfRootFileChanged()
        #expect(store.generation == other)
        #expect(try store.read().get(Array("a0".utf8), in: "acks") == Array("0".utf8))
        #expect(store.rootGlance?.changedSlots() == nil)
    }

    @Test func aReadOnlyStoreAdoptsAnotherProcesssCommitAtItsNextLook() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let writer = try Store.open(at: path, options: testOptions())
        try writer.write { try $0.put([1], for: [1], in: "t") }
        writer.close()
        let store = try Store.openReadOnly(at: path, options: testOptions())
        defer { store.close() }
        let before = store.generation

        let other = try Self.commitInAnotherProcess(at: path)
        #expect(store.generation == before, "the store followed without a look")
        store.followIfRootFileChanged()
        #expect(store.generation == other)
        #expect(try store.read().get(Array("a0".utf8), in: "acks") == Array("0".utf8))
        #expect(store.rootGlance?.changedSlots() == nil)
    }

    @Test func aStoreOnAFileSystemThatCannotMapHasNoGlance() throws {
        let store = try Store.open(at: "/store", options: testOptions(MemoryFileSystem()))
        defer { store.close() }
        #expect(store.rootGlance == nil)
        store.followIfRootFileChanged()  // does nothing, and does not fail
    }

    /// One commit by an `acked-writer` child; returns the generation it made.
    static func commitInAnotherProcess(at path: String) throws -> UInt64 {
        let child = try ChildProcess(try ProjectExecutable.path("folio-torture"), ["acked-writer", path, "0", "1"])
        let done = try child.waitForLine { $0.hasPrefix("done ") }
        #expect(try child.wait() == 0, "\(child.errorOutput.suffix(600))")
        return try #require(UInt64(done.split(separator: " ")[1]))
    }
}
