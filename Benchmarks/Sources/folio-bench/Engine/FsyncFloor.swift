import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The cheapest possible durable commit on this disk, with raw POSIX calls: append 100
/// bytes to a data file and fsync it, write a 256-byte root to a temporary file and fsync
/// it, rename it over the root file, fsync the directory. Folio's commit protocol does the
/// same steps (plus its pages and checksums), so no Folio commit can be faster than this.
///
/// The directory stays open across commits (Folio opens it per commit: a few µs more).
final class FsyncFloor {
    private let directory: String
    private let dataFD: Int32
    private let directoryFD: Int32
    private var offset: off_t = 0
    private let payload = [UInt8](repeating: 0xAB, count: 100)
    private let root = [UInt8](repeating: 0xCD, count: 256)

    init(directory: String) throws {
        self.directory = directory
        dataFD = open(directory + "/data", O_RDWR | O_CREAT | O_TRUNC, 0o644)
        directoryFD = open(directory, O_RDONLY)
        guard dataFD >= 0, directoryFD >= 0 else { throw Self.failure("open") }
    }

    deinit {
        close(dataFD)
        close(directoryFD)
    }

    /// One commit: the six steps above.
    func commit() throws {
        let temporary = directory + "/root.tmp", final = directory + "/root"
        guard pwrite(dataFD, payload, payload.count, offset) == payload.count else { throw Self.failure("pwrite") }
        offset += off_t(payload.count)
        guard fsync(dataFD) == 0 else { throw Self.failure("fsync data") }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw Self.failure("open root.tmp") }
        defer { close(fd) }
        guard write(fd, root, root.count) == root.count else { throw Self.failure("write root.tmp") }
        guard fsync(fd) == 0 else { throw Self.failure("fsync root.tmp") }
        guard rename(temporary, final) == 0 else { throw Self.failure("rename") }
        guard fsync(directoryFD) == 0 else { throw Self.failure("fsync directory") }
    }

    private static func failure(_ step: String) -> BenchError {
        BenchError.harness("fsync-floor: \(step) failed: \(String(cString: strerror(errno)))")
    }
}
