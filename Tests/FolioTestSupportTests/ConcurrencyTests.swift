import Dispatch
import FolioStorage
import FolioTestSupport
import Testing

/// The test file systems are used from several threads at once by the engine's tests.
@Suite struct ConcurrencyTests {
    @Test func stackedFileSystemsCountEveryCallFromEveryThread() throws {
        let powerLoss = PowerLossFileSystem()
        let faults = FaultInjectingFileSystem(wrapping: powerLoss)
        let recording = RecordingFileSystem(wrapping: faults)
        let threads = 8, writesPerThread = 50

        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            do {
                let file = try recording.open("/t\(thread)", mode: .create)
                for index in 0..<writesPerThread {
                    try file.write([UInt8(thread), UInt8(index)], at: UInt64(2 * index))
                }
                try file.sync()
                file.close()
            } catch {
                Issue.record("thread \(thread): \(error)")
            }
        }

        #expect(recording.statistics.writes == threads * writesPerThread)
        #expect(recording.statistics.bytesWritten == threads * writesPerThread * 2)
        #expect(recording.operations.count == threads * (writesPerThread + 3))
        #expect(faults.callCount == threads * (writesPerThread + 2))  // close is not counted
        #expect(powerLoss.syncPoints == threads)
        #expect(powerLoss.pendingDataOperations == 0)
        #expect(powerLoss.pendingNamespaceOperations == threads)
        for thread in 0..<threads {
            let expected = (0..<writesPerThread).flatMap { [UInt8(thread), UInt8($0)] }
            #expect(powerLoss.contents(of: "/t\(thread)") == expected)
        }
    }
}
