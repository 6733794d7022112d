import Testing
import FolioStorage
import FolioTestSupport

@Suite struct DurabilityModeTests {
    /// Full durability: every commit syncs the snapshot, the root temp file and the directory.
    @Test func fullDurabilitySyncsEveryCommit() throws {
        let recording = RecordingFileSystem(wrapping: try memoryFileSystem())
        let store = try Store.open(at: "/stores/s", options: testOptions(recording))
        recording.reset()
        for i in 0..<10 { try store.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        let counts = recording.statistics
        #expect(counts.syncs == 20, "snapshot + root.tmp per commit")
        #expect(counts.directorySyncs == 10)
        #expect(counts.renames == 10)
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
        let store = try Store.open(at: "/stores/s", options: testOptions(recording, durability: .grouped(window: .seconds(30))))
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
        let recovered = try Store.openReadOnly(at: "/stores/s", options: testOptions(lost))
        #expect(recovered.generation == durableGeneration)
        #expect(try recovered.read().count(in: "t") == 1)
        #expect(recovered.verify().isClean)
        try store.flush()
        #expect(recording.statistics.syncs == 2)
        #expect(recording.statistics.renames == 1)
        #expect(recording.statistics.directorySyncs == 1)
        let kept = power.crashImage(mode: .durableOnly)
        let reopened = try Store.openReadOnly(at: "/stores/s", options: testOptions(kept))
        #expect(reopened.generation == store.generation)
        #expect(try reopened.read().count(in: "t") == 21)
        store.close()
    }

    /// The grouped window flushes by itself.
    @Test func groupedWindowFlushesByItself() async throws {
        let recording = RecordingFileSystem(wrapping: try memoryFileSystem())
        let store = try Store.open(at: "/stores/s", options: testOptions(recording, durability: .grouped(window: .milliseconds(20))))
        recording.reset()
        try store.write { try $0.put([1], for: [1], in: "t") }
        var waited = 0
        while recording.statistics.renames == 0 && waited < 200 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        #expect(recording.statistics.renames == 1)
        store.close()
    }
}
