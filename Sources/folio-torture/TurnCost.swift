import Foundation
import FolioStorage

/// `folio-torture turn-cost STORE N`: what a writer pays per turn (it takes the store's lock
/// when its first transaction begins and lets it go once its commits are durable), beside
/// what a commit costs, on this machine's file system. Prints one line per measure, in
/// nanoseconds per operation (medians of five rounds of N):
///
///     lock <ns>         flock try and unlock of a lock file
///     turn <ns>         an empty turn: lock, a catch-up that finds nothing new, unlock
///     commit <ns>       a one-key commit in a turn of its own (full durability: its
///                       fdatasync and slot write), as a process that writes alone commits
///     commit-held <ns>  the same commit while the turn is held throughout (an idle
///                       transaction stays open): no lock and no catch-up per commit
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
    let turn = try median { _ = try store.catchUpWithOtherWriters() }
    say("turn \(turn)")
    var key: UInt8 = 0
    func commit() throws {
        key &+= 1
        try store.write { try $0.put([key], for: [key], in: "t") }
    }
    // Alternated, so that both see the same disk and the same neighbours.
    var perTurn: [Int] = []
    var held: [Int] = []
    for _ in 0..<3 {
        perTurn.append(try median(1, commit))
        let pin = try store.beginWrite()
        held.append(try median(1, commit))
        pin.rollback()
    }
    say("commit \(perTurn.sorted()[1])")
    say("commit-held \(held.sorted()[1])")
}
