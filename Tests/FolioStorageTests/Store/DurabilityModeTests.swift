import Testing
import FolioStorage
import FolioTestSupport

@Suite struct DurabilityModeTests {
    /// Full durability (format version 2): every commit syncs its run, once, and writes its
    /// root slot in place; the root file is synced once the slot written is
    /// `RootSlots.maximumAnchorLag` (64) generations ahead of the anchor; nothing is renamed
    /// and no directory synced.
    @Test func fullDurabilitySyncsEveryCommitOnce() throws {
        let recording = RecordingFileSystem(wrapping: try memoryFileSystem())
        let store = try Store.open(at: "/stores/s", options: testOptions(recording))
        recording.reset()
        for i in 0..<10 { try store.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        var counts = recording.statistics
        #expect(counts.syncs == 10, "one sync (of the run) per commit")
        #expect(counts.directorySyncs == 0)
        #expect(counts.renames == 0)
        recording.reset()
        for i in 0..<64 { try store.write { try $0.put([UInt8(i)], for: [UInt8(i), 1], in: "t") } }
        counts = recording.statistics
        #expect(counts.syncs == 65, "64 runs, and the root file once: 64 generations past the anchor, the open's")
        store.close()
    }

    /// Grouped durability: commits inside the window share one snapshot sync and one root
    /// replacement; readers of this process see each commit at once; flush() makes them
    /// durable, and a power cut before the flush loses at most the window.
    @Test func groupedCommitsShareOneSync() throws {
        let power = PowerLossFileSystem()
        try power.createDirectory("/stores")
        try power.syncDirectory("/")
        let recording = RecordingFileSystem(wrapping: power)
        let store = try Store.open(
            at: "/stores/s", options: testOptions(recording, durability: .grouped(window: .seconds(30))))
        try store.write { try $0.put([0], for: [0], in: "t") }
        try store.flush()
        let durableGeneration = store.generation
        recording.reset()
        for i in 1...20 {
            try store.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") }
            #expect(try store.read().get([UInt8(i)], in: "t") == [UInt8(i)])
        }
        #expect(recording.statistics.syncs == 0)
        #expect(recording.statistics.renames == 0)
        // A power cut now: the store opens at the last flushed generation, intact.
        let lost = power.crashImage(mode: .durableOnly)
        let recovered = try Store.open(at: "/stores/s", options: testOptions(lost))
        #expect(recovered.generation == durableGeneration)
        #expect(try recovered.read().count(in: "t") == 1)
        #expect(recovered.verify().isClean)
        recovered.close()
        try store.flush()
        #expect(recording.statistics.syncs == 1, "the runs of the 20 commits, once")
        #expect(recording.statistics.renames == 0)
        #expect(recording.statistics.directorySyncs == 0)
        // The root slot written by the flush is not synced: recovery follows the runs.
        let kept = power.crashImage(mode: .durableOnly)
        let reopened = try Store.open(at: "/stores/s", options: testOptions(kept))
        #expect(reopened.generation == store.generation)
        #expect(try reopened.read().count(in: "t") == 21)
        reopened.close()
        store.close()
    }

    /// The grouped window flushes by itself.
    @Test func groupedWindowFlushesByItself() async throws {
        let recording = RecordingFileSystem(wrapping: try memoryFileSystem())
        let store = try Store.open(
            at: "/stores/s", options: testOptions(recording, durability: .grouped(window: .milliseconds(20))))
        recording.reset()
        try store.write { try $0.put([1], for: [1], in: "t") }
        var waited = 0
        while recording.statistics.syncs == 0 && waited < 200 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        #expect(recording.statistics.syncs == 1)
        store.close()
    }
}
