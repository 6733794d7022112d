import Foundation
import FolioStorage
import Synchronization

/// `folio-torture follow-generations STORE`: a read-only process that follows the store's
/// writers (`startFollowing()`) and reports what its observer is told, so that a test can
/// check, across writer processes that are killed and restarted, that a follower misses no
/// generation without being told. Prints "start G" once following from generation G, then
/// "gen G" for each commit delivered and "unavailable A B" for each `historyUnavailable`
/// event (from A to B). At end of standard input it catches up once more (the writers are
/// done by then, so nothing depends on the watch noticing their last commit), waits until
/// that is delivered, and prints "end G" with the store's generation; nothing is printed
/// after it. Errors of the follower's catch-up are logged to standard error.
func runFollowGenerations(_ arguments: [String]) throws {
    guard arguments.count == 1 else { fail("usage: folio-torture follow-generations STORE") }
    let options = StoreOptions(log: { message in FileHandle.standardError.write(Data("log: \(message)\n".utf8)) })
    let store = try Store.openReadOnly(at: arguments[0], options: options)
    // Lines are printed under this lock, which "end" also takes: no handler still running on
    // the follower's thread prints after it.
    let ended = Mutex(false)
    let observation = store.observe { event in
        ended.withLock { ended in
            guard !ended else { return }
            switch event {
            case .committed(let commits):
                for commit in commits { say("gen \(commit.generation)") }
            case .historyUnavailable(let from, let to):
                say("unavailable \(from) \(to)")
            }
        }
    }
    say("start \(store.generation)")
    try store.startFollowing()
    while readLine() != nil {}
    store.catchUp()
    let generation = store.generation
    // Another thread (the watch's) may be the one handing the last events out.
    let deadline = ContinuousClock.now + .seconds(30)
    while store.deliveredGeneration < generation && ContinuousClock.now < deadline {
        Thread.sleep(forTimeInterval: 0.001)
    }
    ended.withLock { ended in
        ended = true
        say("end \(generation)")
    }
    observation.cancel()
    store.close()
}
