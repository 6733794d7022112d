import Testing
import FolioStorage
import FolioTestSupport

/// A store this process may read but not write (permissions, a read-only volume) is
/// refused for writing with an error that says so and what to do, and opens read-only.
@Suite struct NotWritableTests {
    @Test func aWriterOpenDeniedAccessSaysToOpenReadOnly() throws {
        let memory = try memoryFileSystem()
        let store = try Store.open(at: "/stores/s", options: testOptions(memory))
        try store.write { try $0.put(bytes("v"), for: bytes("k"), in: "t") }
        store.close()

        // The lock file cannot be opened for writing: what EACCES on it, or on a read-only
        // mount (EROFS), looks like to the writer open.
        let denied = FaultInjectingFileSystem(
            wrapping: memory, plan: FaultPlan(failingCall: 1, kind: .accessDenied),
            countedKinds: [.openLockFile])
        #expect {
            try Store.open(at: "/stores/s", options: testOptions(denied))
        } throws: { error in
            guard case StorageError.notWritable(let path, let cause) = error else { return false }
            return path == "/stores/s" && cause.contains("errno 13")
                && error.localizedDescription.isEmpty == false && "\(error)".contains("open it read-only")
        }
        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(denied))
        defer { reader.close() }
        #expect(try reader.read().get(bytes("k"), in: "t") == bytes("v"))
    }

    @Test func otherFailuresOfTheWriterOpenStayIOErrors() throws {
        let memory = try memoryFileSystem()
        try Store.open(at: "/stores/s", options: testOptions(memory)).close()
        let failing = FaultInjectingFileSystem(
            wrapping: memory, plan: FaultPlan(failingCall: 1, kind: .io), countedKinds: [.openLockFile])
        #expect {
            try Store.open(at: "/stores/s", options: testOptions(failing))
        } throws: { error in
            if case StorageError.io = error { return true }
            return false
        }
    }
}
