import FolioStorage

/// A handle returned by ``RecordingFileSystem``: logs each call, then forwards it.
final class RecordingFile: StorageFile {
    private let wrapped: any StorageFile
    private let log: OperationLog

    init(wrapping file: any StorageFile, log: OperationLog) {
        wrapped = file
        self.log = log
    }

    var path: String { wrapped.path }

    func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
        log.record(.read(path: path, offset: offset, count: count))
        let bytes = try wrapped.read(at: offset, count: count)
        log.countBytesRead(bytes.count)
        return bytes
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        log.record(.write(path: path, offset: offset, count: bytes.count))
        try wrapped.write(bytes, at: offset)
    }

    func sync() throws(StorageError) {
        log.record(.sync(path: path))
        try wrapped.sync()
    }

    func truncate(to length: UInt64) throws(StorageError) {
        log.record(.truncate(path: path, length: length))
        try wrapped.truncate(to: length)
    }

    func size() throws(StorageError) -> UInt64 {
        log.record(.size(path: path))
        return try wrapped.size()
    }

    func identity() throws(StorageError) -> FileIdentity {
        log.record(.fileIdentity(path: path))
        return try wrapped.identity()
    }

    func close() {
        log.record(.close(path: path))
        wrapped.close()
    }
}

/// A lock returned by ``RecordingFileSystem``: logs each ``unlock()``, then forwards it.
final class RecordingLock: FileLock {
    private let wrapped: any FileLock
    private let path: String
    private let log: OperationLog

    init(wrapping lock: any FileLock, path: String, log: OperationLog) {
        wrapped = lock
        self.path = path
        self.log = log
    }

    func unlock() {
        log.record(.unlock(path: path))
        wrapped.unlock()
    }
}

/// A lock file returned by ``RecordingFileSystem``: logs each call, then forwards it.
final class RecordingLockFile: LockFile {
    private let wrapped: any LockFile
    private let log: OperationLog

    init(wrapping file: any LockFile, log: OperationLog) {
        wrapped = file
        self.log = log
    }

    var path: String { wrapped.path }

    func tryLock() throws(StorageError) -> Bool {
        log.record(.tryLock(path: path))
        return try wrapped.tryLock()
    }

    func unlock() {
        log.record(.unlock(path: path))
        wrapped.unlock()
    }

    func close() {
        log.record(.close(path: path))
        wrapped.close()
    }
}
