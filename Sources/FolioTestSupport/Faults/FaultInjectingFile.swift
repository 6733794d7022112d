import FolioStorage

/// A handle returned by ``FaultInjectingFileSystem``: each call is counted in the file
/// system's global sequence and may fail as its plan says.
final class FaultInjectingFile: StorageFile {
    private let wrapped: any StorageFile
    private let injector: FaultInjector

    init(wrapping file: any StorageFile, injector: FaultInjector) {
        wrapped = file
        self.injector = injector
    }

    var path: String { wrapped.path }

    func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
        try injector.admit(.read(path: path, offset: offset, count: count))
        return try wrapped.read(at: offset, count: count)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        let operation = FileOperation.write(path: path, offset: offset, count: bytes.count)
        switch injector.verdict(for: operation) {
        case .proceed:
            try wrapped.write(bytes, at: offset)
        case .fail(let code):
            throw FaultInjector.error(operation, code)
        case .shortWrite(let keep, let code):
            if keep > 0 { try wrapped.write(UnsafeRawBufferPointer(rebasing: bytes[0..<keep]), at: offset) }
            throw FaultInjector.error(operation, code)
        }
    }

    func sync() throws(StorageError) {
        try injector.admit(.sync(path: path))
        try wrapped.sync()
    }

    func truncate(to length: UInt64) throws(StorageError) {
        try injector.admit(.truncate(path: path, length: length))
        try wrapped.truncate(to: length)
    }

    func size() throws(StorageError) -> UInt64 {
        try injector.admit(.size(path: path))
        return try wrapped.size()
    }

    func identity() throws(StorageError) -> FileIdentity {
        try injector.admit(.fileIdentity(path: path))
        return try wrapped.identity()
    }

    func close() {
        wrapped.close()
    }
}

/// A lock file returned by ``FaultInjectingFileSystem``: each ``tryLock()`` is counted and
/// may fail as the plan says; `unlock()` and `close()` cannot fail and are only forwarded.
final class FaultInjectingLockFile: LockFile {
    private let wrapped: any LockFile
    private let injector: FaultInjector

    init(wrapping file: any LockFile, injector: FaultInjector) {
        wrapped = file
        self.injector = injector
    }

    var path: String { wrapped.path }

    func tryLock() throws(StorageError) -> Bool {
        try injector.admit(.tryLock(path: path))
        return try wrapped.tryLock()
    }

    func unlock() { wrapped.unlock() }

    func close() { wrapped.close() }
}
