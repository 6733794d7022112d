import FolioStorage
import Synchronization

/// An open handle on a ``PowerLossFileSystem`` file. It refers to the inode, not the name,
/// so it keeps working after the file is renamed or removed.
final class PowerLossFile: StorageFile {
    let path: String
    private let fileSystem: PowerLossFileSystem
    private let inode: PowerLossInode
    private let writable: Bool
    private let closed = Atomic<Bool>(false)

    init(fileSystem: PowerLossFileSystem, inode: PowerLossInode, path: String, writable: Bool) {
        self.fileSystem = fileSystem
        self.inode = inode
        self.path = path
        self.writable = writable
    }

    private func check(_ operation: String, writing: Bool) throws(StorageError) {
        if closed.load(ordering: .acquiring) || (writing && !writable) {
            throw .io(operation: operation, path: path, code: SystemError.badDescriptor)
        }
    }

    func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
        try check("pread", writing: false)
        return fileSystem.state.withLock { _ in
            let bytes = inode.data.live
            guard offset < UInt64(bytes.count), count > 0 else { return [] }
            let start = Int(offset)
            return Array(bytes[start..<(start + min(count, bytes.count - start))])
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        try check("pwrite", writing: true)
        let copy = [UInt8](bytes)
        fileSystem.state.withLock { _ in inode.data.write(copy, at: Int(offset)) }
    }

    /// Like `fsync` on Linux, allowed on a read-only handle.
    func sync() throws(StorageError) {
        try check("fsync", writing: false)
        fileSystem.sync(inode, path: path)
    }

    func truncate(to length: UInt64) throws(StorageError) {
        try check("ftruncate", writing: true)
        fileSystem.state.withLock { _ in inode.data.truncate(to: Int(length)) }
    }

    func size() throws(StorageError) -> UInt64 {
        try check("fstat", writing: false)
        return fileSystem.state.withLock { _ in UInt64(inode.data.live.count) }
    }

    /// The inode's number, on this file system's device: unchanged by renames of the file.
    func identity() throws(StorageError) -> FileIdentity {
        try check("fstat", writing: false)
        return FileIdentity(device: fileSystem.device, inode: inode.number)
    }

    func close() { closed.store(true, ordering: .releasing) }
}
