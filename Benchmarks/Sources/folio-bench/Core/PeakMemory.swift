import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Peak resident memory (high-water mark) of this process.
///
/// Linux: `VmHWM` from `/proc/self/status`. Writing `5` to `/proc/self/clear_refs` resets the
/// high-water mark to the current resident size (Linux ≥ 4.0), so a workload's peak can be
/// read on its own: ``resetPeak()`` just before the timed part, ``peakBytes()`` after it.
/// ``probe()`` checks at start-up that the reset really works here; if it does not, rows
/// report the process-wide peak so far and say so (``Scope/process``).
///
/// Before each reset, freed heap memory is handed back to the system (`malloc_trim`), so a
/// workload is not charged for what an earlier one left in malloc's free lists. The peak
/// still includes what the harness itself holds at that moment (its input records, keys).
enum PeakMemory {
    /// What a peak figure covers.
    enum Scope: String, Codable, Sendable {
        /// From the reset before the timed part of a run to its end.
        case workload
        /// From the start of the process (the reset does not work on this system).
        case process
        /// A child process's whole life (workloads run in a fresh process).
        case childProcess = "child-process"
    }

    nonisolated(unsafe) private static var resetWorks = false

    /// The scope of the figures ``peakBytes()`` returns, as probed.
    static var scope: Scope { resetWorks ? .workload : .process }

    /// How the figures were measured, for the machine section of the report.
    static var methodDescription: String {
        #if os(Linux)
        if resetWorks {
            return
                "VmHWM from /proc/self/status, reset before each run by writing 5 to /proc/self/clear_refs (verified at start-up: the mark fell after freeing 64 MiB); includes the harness's own input data"
        }
        return
            "VmHWM from /proc/self/status; resetting it via /proc/self/clear_refs did NOT work here, so figures are the process-wide peak so far"
        #else
        return "ru_maxrss from getrusage: process-wide peak so far (no reset on this system)"
        #endif
    }

    /// Checks whether ``resetPeak()`` lowers the high-water mark: maps and touches 64 MiB,
    /// unmaps it, resets, and checks the mark fell by at least 48 MiB.
    @discardableResult
    static func probe() -> Bool {
        #if os(Linux)
        let size = 64 << 20
        guard let region = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            region != MAP_FAILED
        else { return false }
        let bytes = region.assumingMemoryBound(to: UInt8.self)
        for offset in stride(from: 0, to: size, by: 4096) { bytes[offset] = 1 }
        let high = peakBytes()
        munmap(region, size)
        resetWorks = writeClearRefs()
        let after = peakBytes()
        resetWorks = resetWorks && high - after >= 48 << 20
        return resetWorks
        #else
        return false
        #endif
    }

    /// Returns freed heap to the system and resets the high-water mark (if that works here).
    static func resetPeak() {
        trimHeap()
        if resetWorks { _ = writeClearRefs() }
    }

    /// The high-water mark of resident memory, in bytes.
    ///
    /// Linux: never `getrusage`'s `ru_maxrss` there, which is the maximum of this address
    /// space's mark and the one before `execve`: a child spawned by a large parent would
    /// report the parent's size.
    static func peakBytes() -> Int {
        #if os(Linux)
        if let value = statusField("VmHWM:") { return value }
        preconditionFailure("no VmHWM in /proc/self/status")
        #else
        var usage = rusage()
        getrusage(RUSAGE_SELF, &usage)
        return Int(usage.ru_maxrss)
        #endif
    }

    /// A `kB` field of `/proc/self/status`, in bytes.
    private static func statusField(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        // The line is "VmHWM:<tab><spaces>1234 kB".
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            let digits = line.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first
            if let digits, let kilobytes = Int(digits) { return kilobytes * 1024 }
        }
        return nil
    }

    private static func writeClearRefs() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let written = write(fd, "5", 1)
        return written == 1
    }

    private typealias MallocTrim = @convention(c) (Int) -> Int32
    private static let mallocTrim: MallocTrim? = {
        #if os(Linux)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: MallocTrim.self)
        #else
        return nil
        #endif
    }()

    /// glibc's `malloc_trim(0)`, looked up at run time (Glibc's Swift module does not export it).
    private static func trimHeap() {
        _ = mallocTrim?(0)
    }
}
