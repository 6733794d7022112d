import Foundation
import FolioStorage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `restore` suite: `Store.restore(from:to:at:)` against copying the same store's files,
/// for a store of about 100 MiB of live data with 100,000 retained generations ("many") and
/// one of the same live data with few ("few"). Storage engine only (a restore copies pages,
/// not records).
///
/// Both stores: ``Sizes/restoreBytes`` of live data, 1 KiB random values under 8-byte keys
/// in one tree, written in transactions of 10,000 keys. "many" then makes
/// ``Sizes/restoreGenerations`` more commits, each updating one of 16 small counters in a
/// second tree (an app's typical small commit; each appends a run of about 1 KiB). Nothing
/// compacts (automatic compaction off), so the commit chain reaches every generation: all
/// are retained and readable. Built with grouped durability (1 s window) and flushed before
/// measuring; restores and copies are fully durable (each file fsynced).
///
/// Workloads (every run writes a new destination, removed untimed after it; the page cache
/// is warm for copies and restores alike: the stores were just built and are read every run;
/// each row's notes give the median processor time, user + system, of the timed part):
/// - `copy-files-many` / `copy-files-few`: every file of the store read and written to a
///   new directory (1 MiB reads and writes), each file fsynced, then the directories:
///   what `cp -r` and a sync do;
/// - `restore-newest-many` / `restore-newest-few`: `Store.restore` of the newest
///   generation: opening read-only, reading the snapshot file once to check every run's
///   checksum, copying the live pages (each page's checksum checked), fsync;
/// - `restore-old-many`: `Store.restore` at the generation right after the bulk load,
///   ``Sizes/restoreGenerations`` commits back (the walk along the chain to it included).
enum RestoreSuite {
    static let name = "restore"
    static let workloadNames = [
        "copy-files-many", "restore-newest-many", "restore-old-many", "copy-files-few", "restore-newest-few",
    ]
    static let valueBytes = 1_024
    static let batch = 10_000
    static let counters = 16

    static func run(_ context: BenchContext) async throws {
        let sizes = context.sizes
        let keys = max(1, sizes.restoreBytes / valueBytes)
        let many = try context.scratch.makeDirectory("restore-many")
        let few = try context.scratch.makeDirectory("restore-few")
        let built = Date()
        let loaded = try build(at: many, keys: keys, generations: sizes.restoreGenerations)
        _ = try build(at: few, keys: keys, generations: 0)
        let seconds = String(format: "%.1f", Date().timeIntervalSince(built))
        printError(
            "restore: built the stores in \(seconds) s (\(Format.bytes(Scratch.bytesOnDisk(many))) and "
                + "\(Format.bytes(Scratch.bytesOnDisk(few))) on disk)")
        let options = StoreOptions(createIfMissing: false, autoCompaction: nil)
        let oldGeneration = loaded.afterLoad
        let manyBytes = Scratch.bytesOnDisk(many), fewBytes = Scratch.bytesOnDisk(few)
        func workload(
            _ name: String, store: String, operations: Int, notes: [String],
            _ body: @escaping (String) throws -> [String]
        ) -> Workload {
            Workload(
                suite: Self.name, name: name, system: "folio", n: sizes.restoreGenerations,
                durability: .alwaysFull, operations: operations, notes: notes
            ) { run in
                let destination = try context.scratch.makeDirectory(name + "-dest")
                try FileManager.default.removeItem(atPath: destination)
                defer { context.scratch.remove(destination) }
                // Processor time too (user + system, this process): the machine is shared, and
                // it is what the work costs whatever else runs.
                var cpu = 0.0
                run.notes = try await run.measure {
                    let before = processorSeconds()
                    defer { cpu = processorSeconds() - before }
                    return try body(destination)
                }
                run.recordPart("processor time", seconds: cpu)
                run.bytesOnDisk = Scratch.bytesOnDisk(destination)
            }
        }
        func restore(_ source: String, at generation: UInt64?) -> (String) throws -> [String] {
            { destination in
                let report = try Store.restore(from: source, to: destination, at: generation, options: options)
                guard report.generation == (generation ?? report.newest), !report.fellBack else {
                    throw BenchError.wrongResult("restore gave \(report)")
                }
                return [
                    "last run: generation \(report.generation) of \(report.newest), \(report.runsChecked) runs checked "
                        + "in \(Format.bytes(Int64(report.bytesChecked))) read, \(Format.bytes(Int64(report.bytes))) written"
                ]
            }
        }
        let copy = { (source: String) -> (String) throws -> [String] in
            { destination in
                let copied = try FileCopy.copyTree(source, to: destination)
                return ["last run: \(copied.files) files, \(Format.bytes(copied.bytes)) copied"]
            }
        }
        let manyNote = "store: \(Format.bytes(manyBytes)) on disk, \(loaded.newest) generations, all retained"
        let fewNote = "store: \(Format.bytes(fewBytes)) on disk, \(loaded.afterLoad) generations"
        try await context.measureInterleaved([
            workload(
                "copy-files-many", store: many, operations: 1, notes: [manyNote, "read + write + fsync of every file"],
                copy(many)),
            workload(
                "restore-newest-many", store: many, operations: 1, notes: [manyNote, "Store.restore of the newest"],
                restore(many, at: nil)),
            workload(
                "restore-old-many", store: many, operations: 1,
                notes: [
                    manyNote, "Store.restore at generation \(oldGeneration), \(loaded.newest - oldGeneration) back",
                ],
                restore(many, at: oldGeneration)),
            workload(
                "copy-files-few", store: few, operations: 1, notes: [fewNote, "read + write + fsync of every file"],
                copy(few)),
            workload(
                "restore-newest-few", store: few, operations: 1, notes: [fewNote, "Store.restore of the newest"],
                restore(few, at: nil)),
        ])
        context.scratch.remove(many)
        context.scratch.remove(few)
    }

    /// Writes the store: `keys` random 1 KiB values in transactions of ``batch``, then
    /// `generations` single-counter commits. Returns the generation after the load and the
    /// newest.
    static func build(at path: String, keys: Int, generations: Int) throws -> (afterLoad: UInt64, newest: UInt64) {
        try? FileManager.default.removeItem(atPath: path)
        let options = StoreOptions(durability: .grouped(window: .seconds(1)), autoCompaction: nil)
        let store = try Store.open(at: path, options: options)
        defer { store.close() }
        var rng = SplitMix64(seed: 30)
        var next = 0
        while next < keys {
            let end = min(keys, next + batch)
            try store.write { txn in
                for key in next..<end {
                    var value = [UInt8](repeating: 0, count: valueBytes)
                    for index in stride(from: 0, to: valueBytes, by: 8) {
                        withUnsafeBytes(of: rng.next()) { value.replaceSubrange(index..<index + 8, with: $0) }
                    }
                    try txn.put(value, for: key8(UInt64(key)), in: "records")
                }
            }
            next = end
        }
        let afterLoad = store.generation
        for step in 0..<generations {
            try store.write { txn in
                try txn.put(key8(UInt64(step)), for: key8(UInt64(step % counters)), in: "counters")
            }
        }
        try store.flush()
        return (afterLoad, store.generation)
    }

    /// User and system processor time of this process so far, in seconds.
    static func processorSeconds() -> Double {
        var usage = rusage()
        #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        return user + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    static func key8(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
}

/// `cp -r` and a sync, with the system calls a copy makes: for every file, read and write
/// in 1 MiB pieces and fsync; then fsync every directory created.
enum FileCopy {
    static func copyTree(_ source: String, to destination: String) throws -> (files: Int, bytes: Int64) {
        var files = 0
        var bytes: Int64 = 0
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        for name in try FileManager.default.contentsOfDirectory(atPath: source).sorted() {
            let from = source + "/" + name, to = destination + "/" + name
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: from, isDirectory: &isDirectory)
            if isDirectory.boolValue {
                let copied = try copyTree(from, to: to)
                files += copied.files
                bytes += copied.bytes
                continue
            }
            bytes += try copyFile(from, to: to, buffer: &buffer)
            files += 1
        }
        let fd = open(destination, O_RDONLY)
        guard fd >= 0 else { throw BenchError.harness("open \(destination): errno \(errno)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw BenchError.harness("fsync \(destination): errno \(errno)") }
        return (files, bytes)
    }

    static func copyFile(_ from: String, to: String, buffer: inout [UInt8]) throws -> Int64 {
        let input = open(from, O_RDONLY)
        guard input >= 0 else { throw BenchError.harness("open \(from): errno \(errno)") }
        defer { close(input) }
        let output = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard output >= 0 else { throw BenchError.harness("open \(to): errno \(errno)") }
        defer { close(output) }
        var total: Int64 = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            guard count >= 0 else { throw BenchError.harness("read \(from): errno \(errno)") }
            if count == 0 { break }
            var written = 0
            while written < count {
                let result = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, count - written) }
                guard result > 0 else { throw BenchError.harness("write \(to): errno \(errno)") }
                written += result
            }
            total += Int64(count)
        }
        guard fsync(output) == 0 else { throw BenchError.harness("fsync \(to): errno \(errno)") }
        return total
    }
}
