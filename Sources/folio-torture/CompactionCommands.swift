import Foundation
import FolioStorage

// The commands of the tests of a compaction beside other processes
// (CompactionAcrossProcessesTests): a writer that acknowledges each commit, and a compaction
// that can be held in its copy, so that a parent can make things happen during the copy of
// one process and see what another process does meanwhile.

/// The busy timeout of `--busy-timeout-ms M` among `flags` (zero without it).
private func busyTimeout(_ flags: ArraySlice<String>) -> Duration {
    guard let index = flags.firstIndex(of: "--busy-timeout-ms"), index + 1 < flags.endIndex,
        let milliseconds = Int(flags[index + 1])
    else { return .zero }
    return .milliseconds(milliseconds)
}

/// `acked-writer STORE FIRST N [--busy-timeout-ms M]`: N commits, the i-th (from FIRST)
/// putting key "a<i>" = "<i>" in tree "acks"; prints "open G" after opening, "ack i G" once
/// each commit returned, "done G" at the end.
func ackedWriter(_ arguments: [String]) throws {
    guard arguments.count >= 4, let first = Int(arguments[2]), let count = Int(arguments[3]) else {
        fail("usage: folio-torture acked-writer STORE FIRST N [--busy-timeout-ms M]")
    }
    var options = quiet
    options.busyTimeout = busyTimeout(arguments.dropFirst(4))
    let store = try Store.open(at: arguments[1], options: options)
    defer { store.close() }
    say("open \(store.generation)")
    for i in first..<(first + count) {
        try store.write { transaction in
            try transaction.put(Array(String(i).utf8), for: Array("a\(i)".utf8), in: "acks")
        }
        say("ack \(i) \(store.generation)")
    }
    say("done \(store.generation)")
}

/// `compact STORE [--busy-timeout-ms M] [--hold]`: opens for writing and compacts; prints
/// "compacted G" (the compaction's generation), or "locked PATH" if
/// `StorageError.lockedByAnotherWriter(path:)` refused it. With `--hold`, after the first
/// background pass (the copy made, no lock of the store held) it prints "copied G" (the
/// generation copied) and waits for a line on standard input (or its end) before going on:
/// a parent commits, opens or kills meanwhile.
func compactCommand(_ arguments: [String]) throws(StorageError) {
    guard arguments.count >= 2 else { fail("usage: folio-torture compact STORE [--busy-timeout-ms M] [--hold]") }
    let flags = arguments.dropFirst(2)
    var options = quiet
    options.busyTimeout = busyTimeout(flags)
    let store = try Store.open(at: arguments[1], options: options)
    defer { store.close() }
    if flags.contains("--hold") {
        store.onCompactionPass { [store] pass in
            guard pass == 1 else { return }
            say("copied \(store.generation)")
            _ = readLine()
        }
    }
    do throws(StorageError) {
        let report = try store.compact()
        say("compacted \(report.generation)")
    } catch .lockedByAnotherWriter(let path) {
        say("locked \(path)")
    }
}
