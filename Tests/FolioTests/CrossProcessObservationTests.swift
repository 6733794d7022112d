import Testing
import Foundation
import Synchronization
@_spi(Engine) import Folio
import FolioStorage
import FolioTestSupport
import LibraryExample

/// Observation across processes: `folio-torture authors` writes 1,000 transactions (each
/// sets authors 2k and 2k+1 to the transaction number) and compacts every 100, while this
/// process observes and reads, having opened the store read-only, or for writing and
/// staying idle (a writer follows other writers between its turns).
@Suite(.serialized) struct CrossProcessObservationTests {
    @Test(arguments: [false, true])
    func anotherProcessObservesEveryCommitOnceInOrder(observerOpensForWriting: Bool) async throws {
        let path = FileManager.default.temporaryDirectory.path + "/xobserve-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {  // Create the store and declare the datastore, as the app's first launch would.
            let writer = try Persistence(at: path, options: PersistenceOptions(log: { _ in }))
            _ = try await writer.datastore(for: LibraryExample.AuthorFormat.self).count()
            writer.close()
        }
        let options = PersistenceOptions(log: { _ in })
        let writable = observerOpensForWriting ? try Persistence(at: path, options: options) : nil
        let reader = try writable?.readOnly() ?? Persistence(readingFrom: path, options: options)
        defer {
            reader.close()
            writable?.close()
        }
        let authors = reader.datastore(for: LibraryExample.AuthorFormat.self)
        let events = try await authors.observe(bufferLimit: 5_000)
        let transactions = 1_000
        let child = try ChildProcess(
            try ProjectExecutable.path("folio-torture"), ["authors", path, "\(transactions)", "100"])

        // Meanwhile, snapshots read in this process never show a pair split across transactions.
        let stop = Atomic<Bool>(false)
        let snapshots = Task {
            var checked = 0
            while !stop.load(ordering: .relaxed) {
                let all = try await authors.load(...).collect()
                let born = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0.born) })
                for k in 0..<20 where born[2 * k] != born[2 * k + 1] {
                    Issue.record("torn read: authors \(2 * k) and \(2 * k + 1) disagree")
                }
                checked += 1
                try await Task.sleep(for: .milliseconds(5))
            }
            return checked
        }

        // Collected with a deadline, so that a broken observer fails the test instead of
        // hanging it.
        let collector = Task { () -> [Change<LibraryExample.Author, Int>] in
            var changes: [Change<LibraryExample.Author, Int>] = []
            for await event in events {
                switch event {
                case .change(let change): changes.append(change)
                case .failure(let error, _): Issue.record("\(error)")
                case .reload(let token): Issue.record("unexpected reload at \(token)")
                }
                if changes.count == 2 * transactions { break }
            }
            return changes
        }
        let deadline = hangWatchdog { collector.cancel() }
        let changes = await collector.value
        deadline.cancel()
        #expect(changes.count == 2 * transactions, "timed out with \(changes.count) changes")
        stop.store(true, ordering: .relaxed)
        let snapshotsChecked = try await snapshots.value
        #expect(try await child.waitUntilExit() == 0, "writer failed: \(child.errorOutput)")

        // Every transaction once, in order, both of its changes under one token.
        let byToken = Dictionary(grouping: changes, by: \.token)
        #expect(byToken.count == transactions)
        #expect(byToken.values.allSatisfy { $0.count == 2 && $0[0].newValue?.born == $0[1].newValue?.born })
        let order = changes.map { $0.newValue?.born ?? -1 }
        #expect(order == (0..<transactions).flatMap { [$0, $0] }, "transactions in commit order")
        #expect(changes.map(\.token.generation) == changes.map(\.token.generation).sorted())
        #expect(changes.prefix(40).allSatisfy { $0.kind == .created })
        #expect(changes.dropFirst(40).allSatisfy { $0.kind == .updated && $0.oldValue != nil })
        #expect(snapshotsChecked > 0)
        #expect(reader.verify().isClean)
        if let writable {
            // Its first turn builds on what the other process wrote.
            let datastore = writable.datastore(for: LibraryExample.AuthorFormat.self)
            var author = try #require(try await datastore.load(0))
            author.born = -1
            try await datastore.persist(author)
            let all = try await datastore.load(...).collect()
            #expect(all.count == 40)
            #expect(all.first { $0.id == 0 }?.born == -1)
            // Pair 0 was last set by the last transaction that was a multiple of 20.
            #expect(all.first { $0.id == 1 }?.born == (transactions - 1) / 20 * 20)
            #expect(writable.verify().isClean)
        }
    }
}
