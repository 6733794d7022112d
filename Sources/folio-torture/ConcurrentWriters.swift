import Foundation
import FolioStorage
import Synchronization

/// `folio-torture concurrent-writers STORE THREADS N [--first-thread K] [--busy-timeout-ms M]`:
/// THREADS threads write at once, each in a tree of its own, until each has made N commits
/// there. Thread t's i-th commit puts key i (eight digits) into tree "w<t>"; every third one
/// also reads "total" in the shared tree "shared", adds one and logs "t.i" in tree "log", so
/// a lost update or half a transaction shows as a total unequal to the log's count. A
/// conflict is retried in a new transaction. Each thread continues from what the store
/// holds; "open" once opened, "ack t i" once commit i of thread t returned (durable, full
/// durability), "done" at the end.
///
/// Several such processes may write one store at once (writers in turn): `--first-thread K`
/// numbers this process's threads K ..< K + THREADS (trees, log keys and "ack" lines), so
/// that processes given disjoint ranges never share a tree but the shared counter; and
/// `--busy-timeout-ms M` lets opening and each turn wait that long for another process's
/// turn, where the default (zero) fails at once with `lockedByAnotherWriter`.
func runConcurrentWriters(_ arguments: [String]) throws {
    let usage = "usage: folio-torture concurrent-writers STORE THREADS N [--first-thread K] [--busy-timeout-ms M]"
    guard arguments.count >= 3, let threads = Int(arguments[1]), let target = Int(arguments[2]) else {
        fail(usage)
    }
    var firstThread = 0
    var options = quiet
    var rest = arguments.dropFirst(3)
    while let option = rest.popFirst() {
        guard let value = rest.popFirst().flatMap({ Int($0) }), value >= 0 else { fail(usage) }
        switch option {
        case "--first-thread": firstThread = value
        case "--busy-timeout-ms": options.busyTimeout = .milliseconds(value)
        default: fail(usage)
        }
    }
    let store = try Store.open(at: arguments[0], options: options)
    say("open")
    let first = firstThread
    let failure = Mutex<String?>(nil)
    DispatchQueue.concurrentPerform(iterations: threads) { index in
        let thread = first + index
        do {
            let tree = "w\(thread)"
            var next = Int(try store.read().count(in: tree))
            while next < target {
                let i = next
                while true {
                    do {
                        try store.write { transaction in
                            try transaction.put(
                                Array("\(i)".utf8), for: Array(String(format: "%08d", i).utf8), in: tree)
                            guard i % 3 == 0 else { return }
                            let total = try transaction.get(Array("total".utf8), in: "shared").flatMap {
                                Int(String(decoding: $0, as: UTF8.self))
                            }
                            try transaction.put(
                                Array("\((total ?? 0) + 1)".utf8), for: Array("total".utf8), in: "shared")
                            try transaction.put([1], for: Array("\(thread).\(i)".utf8), in: "log")
                        }
                        break
                    } catch StorageError.writeConflict {
                        continue
                    }
                }
                say("ack \(thread) \(i)")
                next += 1
            }
        } catch {
            failure.withLock { $0 = "thread \(thread): \(error)" }
        }
    }
    if let message = failure.withLock({ $0 }) { fail(message) }
    store.close()
    say("done")
}
