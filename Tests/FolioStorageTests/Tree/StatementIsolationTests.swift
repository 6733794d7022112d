import Foundation
import Testing
import FolioStorage
import FolioTestSupport

/// A write from another thread while a statement runs waits for the statement to end: it
/// is never logged in that statement's undo, nor undone by its failure.
@Suite struct StatementIsolationTests {
    struct Failure: Error {}

    @Test func aFailedStatementUndoesOnlyItsOwnWrites() throws {
        let fileSystem = MemoryFileSystem()
        try fileSystem.createDirectory("/stores")
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        defer { store.close() }
        let transaction = try store.beginWrite()
        let inside = DispatchSemaphore(value: 0), written = DispatchSemaphore(value: 0)
        let thread = Thread {
            inside.wait()
            _ = try? transaction.put([1], for: Array("b".utf8), in: "t")
            written.signal()
        }
        thread.start()
        #expect(throws: Failure.self) {
            try transaction.atomically { () throws(Failure) -> Void in
                _ = try? transaction.put([0], for: Array("a".utf8), in: "t")
                inside.signal()
                // Give the other thread time to try its write while the statement runs
                // (the assertions below hold however long it takes).
                Thread.sleep(forTimeInterval: 0.05)
                throw Failure()
            }
        }
        written.wait()
        #expect(try transaction.get(Array("a".utf8), in: "t") == nil)
        #expect(try transaction.get(Array("b".utf8), in: "t") == [1], "the other thread's write was undone")
        try transaction.commit()
    }
}
