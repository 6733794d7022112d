import Foundation
import FolioStorage

/// `folio-torture turn-cost STORE N`: what a writer will pay per transaction once it takes
/// the store's lock per transaction, beside what a commit costs, on this machine's file
/// system. Prints one line per measure, in nanoseconds per operation (medians of five
/// rounds of N):
///
///     lock <ns>      flock try and unlock of the store's lock file (an open WriterLock)
///     catch-up <ns>  a catch-up that finds nothing new (two slots and one header read)
///     commit <ns>    a one-key commit (full durability: its fdatasync and slot write)
///
/// Figures, not a test: Docs/Benchmarks.md cites them ("what taking turns will cost").
func turnCost(_ path: String, count: Int) throws {
    let store = try Store.open(at: path, options: quiet)
    defer { store.close() }
    try store.write { try $0.put([0], for: [0], in: "t") }
    let lockFile = try POSIXFileSystem().openLockFile(path + "/turn-cost.lock")
    defer { lockFile.close() }
    func median(_ rounds: Int = 5, _ body: () throws -> Void) rethrows -> Int {
        var figures: [Int] = []
        for _ in 0..<rounds {
            let start = ContinuousClock.now
            for _ in 0..<count { try body() }
            let elapsed = ContinuousClock.now - start
            let nanoseconds =
                elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
            figures.append(Int(nanoseconds) / count)
        }
        return figures.sorted()[rounds / 2]
    }
    let lock = try median {
        guard try lockFile.tryLock() else { fail("the measuring lock file is held") }
        lockFile.unlock()
    }
    say("lock \(lock)")
    let catchUp = try median { _ = try store.catchUpHoldingLock() }
    say("catch-up \(catchUp)")
    var key: UInt8 = 0
    let commit = try median {
        key &+= 1
        try store.write { try $0.put([key], for: [key], in: "t") }
    }
    say("commit \(commit)")
}
