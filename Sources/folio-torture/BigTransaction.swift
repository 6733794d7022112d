import Foundation
import FolioStorage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The peak-memory check's child (TransactionMemoryTests): puts `count` keys of 16 bytes
/// with 100-byte values into one tree in one transaction, spilling past `budget` bytes, and
/// commits. Prints "rss B" (resident bytes before the transaction) and "peak P" (the
/// process's peak resident bytes after the commit), so the parent sees what the
/// transaction added, with nothing else of the test run in the same process.
func bigTransaction(_ path: String, count: Int, budget: Int) throws {
    var options = StoreOptions(cacheCapacity: 1 << 20, autoCompaction: nil, log: { _ in })
    options.transactionSpillBytes = budget
    // The bounded mode under test: the change log capped as a version-3 build will by default.
    options.changeRecordKeyLimit = 16_384
    let store = try Store.open(at: path, options: options)
    defer { store.close() }
    let value = [UInt8](repeating: 7, count: 100)
    say("rss \(residentBytes())")
    let transaction = try store.beginWrite()
    for number in 0..<count {
        var key = Array("key-".utf8)
        key += Array(String(10_000_000_000 + number).utf8.suffix(12))
        try transaction.put(value, for: key, in: "big")
    }
    try transaction.commit()
    say("peak \(peakResidentBytes())")
    say("count \(try store.read().count(in: "big"))")
}

/// Resident bytes now (`/proc/self/statm`'s second field, in pages), or 0 where unknown.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// The process's peak resident bytes so far (`getrusage`; kilobytes on Linux).
func peakResidentBytes() -> Int {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    return Int(usage.ru_maxrss) * 1024
}
