import Foundation

/// The directory where a run creates its stores, and helpers for the directories in it.
///
/// Everything lives under one `folio-bench-<pid>` directory inside the work directory
/// (`--work-dir`, default the system temporary directory), removed when the run ends.
final class Scratch: @unchecked Sendable {
    // @unchecked: `counter` is only touched by the harness's own task (workload set-up),
    // never by the child tasks a workload starts.
    /// The run's own directory.
    let root: String
    private var counter = 0

    init(workDirectory: String) throws {
        root = (workDirectory as NSString).appendingPathComponent("folio-bench-\(getpid())")
        try? FileManager.default.removeItem(atPath: root)
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    /// A new, empty directory named after `label`.
    func makeDirectory(_ label: String) throws -> String {
        counter += 1
        let path = (root as NSString).appendingPathComponent("\(counter)-\(label)")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A copy of `source` (a closed store's directory) in a new directory, synced to disk.
    ///
    /// The sync is what makes the copy stand for a store in use: a store's files are on disk
    /// once its commits returned, while a fresh copy's pages are all dirty in the page cache.
    /// Left dirty, the first sync of a file flushes the whole copy with it: Folio's first
    /// commit (which syncs its data file) took 2.5 ms instead of 0.3 ms, and SQLite pays the
    /// same at its first checkpoint instead, so a workload of a few commits compared the
    /// copy's flush, not the systems.
    func copy(_ source: String, label: String) throws -> String {
        counter += 1
        let path = (root as NSString).appendingPathComponent("\(counter)-\(label)")
        try FileManager.default.copyItem(atPath: source, toPath: path)
        try Self.sync(path)
        return path
    }

    /// `fsync`s every file and directory under `path`, and `path` itself.
    static func sync(_ path: String) throws {
        var paths = [path]
        if let enumerator = FileManager.default.enumerator(atPath: path) {
            while let name = enumerator.nextObject() as? String {
                paths.append((path as NSString).appendingPathComponent(name))
            }
        }
        for file in paths.reversed() {
            let fd = open(file, O_RDONLY)
            guard fd >= 0 else { throw BenchError.harness("opening \(file) to sync it: errno \(errno)") }
            defer { close(fd) }
            guard fsync(fd) == 0 else { throw BenchError.harness("syncing \(file): errno \(errno)") }
        }
    }

    /// Removes a directory made by this object (errors ignored: it is scratch space).
    func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Removes everything.
    func removeAll() {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// The bytes a directory's files take: the sum of their sizes (apparent sizes, not
    /// allocated blocks), recursively. For a store this counts every file it keeps: data,
    /// journal or WAL, root or lock files.
    static func bytesOnDisk(_ path: String) -> Int64 {
        let manager = FileManager.default
        guard let enumerator = manager.enumerator(atPath: path) else { return 0 }
        var total: Int64 = 0
        while let name = enumerator.nextObject() as? String {
            let full = (path as NSString).appendingPathComponent(name)
            guard let attributes = try? manager.attributesOfItem(atPath: full),
                attributes[.type] as? FileAttributeType == .typeRegular,
                let size = attributes[.size] as? NSNumber
            else { continue }
            total += size.int64Value
        }
        return total
    }
}
