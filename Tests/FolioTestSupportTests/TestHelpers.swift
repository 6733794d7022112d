import FolioStorage
import FolioTestSupport

/// `count` copies of `byte`.
func filled(_ byte: UInt8, _ count: Int) -> [UInt8] {
    [UInt8](repeating: byte, count: count)
}

/// Creates (or replaces) `path` with `bytes` and syncs the file's data, without syncing the
/// directory.
func writeFile(_ fileSystem: any FileSystem, _ path: String, _ bytes: [UInt8], sync: Bool = true) throws(StorageError) {
    let file = try fileSystem.open(path, mode: .truncate)
    defer { file.close() }
    try file.write(bytes, at: 0)
    if sync { try file.sync() }
}

/// The classic durable replace: write `name.tmp`, fsync it, rename it over `name`, fsync the
/// directory.
func replaceAtomically(
    _ fileSystem: any FileSystem, directory: String, name: String,
    with bytes: [UInt8]
) throws(StorageError) {
    let temporary = StoragePath.join(directory, name + ".tmp")
    let file = try fileSystem.open(temporary, mode: .truncate)
    try file.write(bytes, at: 0)
    try file.sync()
    file.close()
    try fileSystem.rename(temporary, to: StoragePath.join(directory, name))
    try fileSystem.syncDirectory(directory)
}

/// The error a fault or a file system throws for a system call.
func ioError(_ operation: String, _ path: String, _ code: Int32) -> StorageError {
    .io(operation: operation, path: path, code: code)
}
