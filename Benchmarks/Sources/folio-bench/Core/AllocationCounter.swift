import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Heap allocations counted by the preload library of `Tools/alloc-count.sh`, when the
/// process runs with it (glibc only); otherwise nothing is counted and rows say nothing.
///
/// The library exports `folio_bench_allocations(calls, bytes)`, found here by name at run
/// time, so the harness needs no link-time dependency on it and behaves the same without it.
enum AllocationCounter {
    /// Allocation calls and requested bytes so far in this process.
    struct Reading {
        var calls: UInt64
        var bytes: UInt64
    }

    private typealias Reader = @convention(c) (UnsafeMutablePointer<UInt64>, UnsafeMutablePointer<UInt64>) -> Void

    private static let reader: Reader? = {
        #if canImport(Glibc)
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "folio_bench_allocations") else {
            return nil
        }
        return unsafeBitCast(symbol, to: Reader.self)
        #else
        return nil
        #endif
    }()

    /// Whether allocations are being counted (the process was started by alloc-count.sh).
    static var isCounting: Bool { reader != nil }

    /// The counters now, or nil when nothing counts.
    static func read() -> Reading? {
        guard let reader else { return nil }
        var calls: UInt64 = 0, bytes: UInt64 = 0
        reader(&calls, &bytes)
        return Reading(calls: calls, bytes: bytes)
    }
}
