import Foundation
import FolioStorage

/// The peak-memory check's child (TransactionMemoryTests): puts `count` keys of 16 bytes
/// with 100-byte values into one tree in one transaction, spilling past `budget` bytes, with
/// the change log capped at `keyLimit` keys, and commits. Prints "rss B" (resident bytes
/// before the transaction) and "peak P" (this program's peak resident bytes after the
/// commit), so the parent sees what the transaction added, with nothing else of the test
/// run in the same process.
func bigTransaction(_ path: String, count: Int, budget: Int, keyLimit: Int) throws {
    var options = StoreOptions(cacheCapacity: 1 << 20, autoCompaction: nil, log: { _ in })
    options.transactionSpillBytes = budget
    // The bounded mode under test: the change log capped as a version-3 build will by default.
    options.changeRecordKeyLimit = keyLimit
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

/// Resident bytes now (`/proc/self/status`'s `VmRSS`), or 0 where unknown.
func residentBytes() -> Int { statusBytes("VmRSS") }

/// The peak resident bytes of this program's own memory map (`/proc/self/status`'s
/// `VmHWM`), or 0 where unknown.
///
/// Not `getrusage`'s `ru_maxrss`: Linux carries the high-water mark of the memory map an
/// `execve` replaces (the launching process's, through `posix_spawn` or `fork`) into the
/// new program's `ru_maxrss`, so it is never below the peak of the test process that
/// launched this one: hundreds of MiB inside the whole test suite, a few dozen alone.
/// `VmHWM` is the high-water mark of the map `execve` created, this program's alone.
func peakResidentBytes() -> Int { statusBytes("VmHWM") }

/// The field `name` of `/proc/self/status` (given in kB), in bytes; 0 where unknown.
private func statusBytes(_ name: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 1, let kilobytes = Int(fields[1]) else { return 0 }
        return kilobytes * 1024
    }
    return 0
}
