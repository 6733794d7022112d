import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files of one ``CommitShape`` floor in a scratch directory, and its commits with raw
/// POSIX calls. Set-up (creating, preallocating and syncing the files) happens in `init`,
/// before the timed part; ``commit(_:)`` is what a row times.
///
/// The directory stays open across commits (the engine opens it per commit: a few µs more).
final class CommitFloor {
    private let shape: CommitShape
    private let directory: String
    private let dataFD: Int32
    private let rootFD: Int32
    private let directoryFD: Int32
    /// Where the next append goes (``CommitShape/Steps/rootReplace`` and ``append``).
    private var end: off_t = 0
    /// How many commits fit in the preallocated region before it is overwritten again.
    private let regionCommits: Int
    private let payload: [UInt8]
    private var slot = [UInt8](repeating: 0xCD, count: CommitShape.slotBytes)
    private let root = [UInt8](repeating: 0xCD, count: CommitShape.rootFileBytes)

    /// Creates the floor's files in `directory` (empty) for `commits` commits per run.
    init(shape: CommitShape, directory: String, commits: Int) throws {
        self.shape = shape
        self.directory = directory
        payload = [UInt8](repeating: 0xAB, count: shape.payloadBytes)
        dataFD = open(directory + "/data", O_RDWR | O_CREAT | O_TRUNC, 0o644)
        rootFD = shape.steps.writesSlot ? open(directory + "/root", O_RDWR | O_CREAT | O_TRUNC, 0o644) : -2
        directoryFD = open(directory, O_RDONLY)
        let region =
            shape.steps.preallocates ? CommitShape.preallocatedBytes(commits: commits, payload: shape.payloadBytes) : 0
        regionCommits = shape.payloadBytes > 0 ? max(1, region / shape.payloadBytes) : 1
        guard dataFD >= 0, rootFD != -1, directoryFD >= 0 else { throw failure("open") }
        if shape.steps.preallocates {
            try fillWithZeros(dataFD, bytes: region)
            guard DiskSync.file(dataFD) else { throw failure("fsync preallocated data") }
        }
        if shape.steps.writesSlot {
            try fillWithZeros(rootFD, bytes: CommitShape.slotSpacing * 2)
            guard DiskSync.file(rootFD) else { throw failure("fsync root") }
        }
        // The files' directory entries are durable before the first timed commit, so no
        // timed sync pays for their creation.
        guard DiskSync.directory(directoryFD) else { throw failure("fsync directory") }
    }

    deinit {
        close(dataFD)
        if rootFD >= 0 { close(rootFD) }
        close(directoryFD)
    }

    /// Commit number `index` (0, 1, 2, ...): the steps of the shape.
    func commit(_ index: Int) throws {
        switch shape.steps {
        case .rootReplace:
            try append()
            guard DiskSync.file(dataFD) else { throw failure("fsync data") }
            try replaceRoot()
        case .append:
            try append()
            guard DiskSync.file(dataFD) else { throw failure("fsync data") }
        case .overwrite:
            try overwrite(index)
            guard DiskSync.data(dataFD) else { throw failure("fdatasync data") }
        case .slot:
            try writeSlot(index)
            guard DiskSync.data(rootFD) else { throw failure("fdatasync root") }
        case .overwriteThenSyncedSlot:
            try overwrite(index)
            guard DiskSync.data(dataFD) else { throw failure("fdatasync data") }
            try writeSlot(index)
            guard DiskSync.data(rootFD) else { throw failure("fdatasync root") }
        case .overwriteThenSlot:
            try overwrite(index)
            guard DiskSync.data(dataFD) else { throw failure("fdatasync data") }
            // No sync: the commit is durable with its run (format v2); the slot is only
            // the fast path to the newest commit.
            try writeSlot(index)
        }
    }

    private func append() throws {
        try writeFully(dataFD, payload, at: end, "pwrite data")
        end += off_t(payload.count)
    }

    /// Overwrites the `index`-th payload-sized part of the preallocated region (wrapping
    /// round if a run commits more than was preallocated), so the file never grows.
    private func overwrite(_ index: Int) throws {
        try writeFully(dataFD, payload, at: off_t(index % regionCommits * payload.count), "pwrite data")
    }

    /// Writes slot `index % 2` in place, stamped with the commit's number.
    private func writeSlot(_ index: Int) throws {
        withUnsafeBytes(of: UInt64(index).littleEndian) { stamp in
            for (i, byte) in stamp.enumerated() { slot[i] = byte }
        }
        try writeFully(rootFD, slot, at: off_t(index % 2 * CommitShape.slotSpacing), "pwrite root slot")
    }

    /// Format v1's root replacement: write `root.tmp` + fsync, rename, fsync the directory.
    private func replaceRoot() throws {
        let temporary = directory + "/root.tmp", final = directory + "/root"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw failure("open root.tmp") }
        defer { close(fd) }
        try writeFully(fd, root, at: 0, "write root.tmp")
        guard DiskSync.file(fd) else { throw failure("fsync root.tmp") }
        guard rename(temporary, final) == 0 else { throw failure("rename") }
        guard DiskSync.directory(directoryFD) else { throw failure("fsync directory") }
    }

    /// Extends an empty file with zeros written in chunks (real blocks, not a hole or an
    /// unwritten extent, whose first write would change metadata).
    private func fillWithZeros(_ fd: Int32, bytes: Int) throws {
        let chunk = [UInt8](repeating: 0, count: min(bytes, CommitShape.preallocationChunk))
        var offset = 0
        while offset < bytes {
            let count = min(chunk.count, bytes - offset)
            try writeFully(
                fd, count == chunk.count ? chunk : Array(chunk.prefix(count)), at: off_t(offset), "preallocate")
            offset += count
        }
    }

    private func writeFully(_ fd: Int32, _ bytes: [UInt8], at offset: off_t, _ step: String) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes {
                pwrite(fd, $0.baseAddress! + done, bytes.count - done, offset + off_t(done))
            }
            if n > 0 { done += n; continue }
            if n < 0 && errno == EINTR { continue }
            throw failure(step)
        }
    }

    private func failure(_ step: String) -> BenchError {
        BenchError.harness("\(shape.workload): \(step) failed: \(String(cString: strerror(errno)))")
    }
}
