import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport

/// Waits for `task`, cancelling it once it has hung for `seconds` (`hangWatchdog`: a safety
/// net so a missed change fails the test with what was seen instead of hanging; nothing
/// asserts on the time).
func finishing<T: Sendable>(_ task: Task<T, Never>, within seconds: Double) async -> T {
    let timer = hangWatchdog(after: .seconds(seconds)) { task.cancel() }
    let value = await task.value
    timer.cancel()
    return value
}

/// Observers under stress: concurrent writers, observers subscribing and unsubscribing all
/// along, slow consumers; nothing is missed, nothing goes back, no observer is left behind.
/// Short by default (CI); set `FOLIO_STRESS_TESTS=1` for the long run.
@Suite struct ObservationStressTests {
    static var isLong: Bool { ProcessInfo.processInfo.environment["FOLIO_STRESS_TESTS"] == "1" }

    @Test func observersUnderConcurrentCommitsMissNothingAndNeverGoBack() async throws {
        let persistence = Persistence.inMemory()
        try await run(persistence, rounds: Self.isLong ? 2_000 : 40)
        // Every sequence is gone: so is every observer.
        await settle(persistence.core.hub)
        #expect(persistence.core.hub.observerCount == 0)
    }

    /// Two writers, each owning four identifiers and writing `born = 1, 2, …, rounds` to each
    /// in turn. Checks: the change stream sees every value of every identifier once, in
    /// order; instance observers opened and dropped all along see strictly increasing
    /// values; a live query never shows an identifier going back and ends at the final state.
    private func run(_ persistence: Persistence<ReadWrite>, rounds: Int) async throws {
        let authors = persistence.datastore(for: AuthorFormat.self)
        let writers = 2, idsPerWriter = 4
        let ids = Array(0..<(writers * idsPerWriter))
        for id in ids { try await authors.persist(Author(id: id, name: "start", born: 0)) }
        let total = writers * idsPerWriter * rounds

        // Every change, with a consumer that pauses now and then.
        let events = try await authors.observe(bufferLimit: total + 10)
        let changes = Task { () -> [Int: Int] in
            var last = Dictionary(uniqueKeysWithValues: ids.map { ($0, 0) })
            var seen = 0
            var lastGeneration: UInt64 = 0
            for await event in events {
                guard case .change(let change) = event, let born = change.newValue?.born else {
                    Issue.record("unexpected \(event)")
                    break
                }
                if born != last[change.identifier]! + 1 {
                    Issue.record("identifier \(change.identifier): \(born) after \(last[change.identifier]!)")
                }
                if change.token.generation < lastGeneration { Issue.record("token went back") }
                lastGeneration = change.token.generation
                last[change.identifier] = born
                seen += 1
                if seen == total { break }
                if seen % 64 == 0 { try? await Task.sleep(for: .milliseconds(1)) }
            }
            return last
        }

        // A live query over everything, consumed slowly.
        let live = try await authors.liveQuery(...)
        let liveCheck = Task { () -> [Int: Int] in
            var last: [Int: Int] = [:]
            do {
                for try await results in live {
                    for author in results {
                        if author.born < last[author.id, default: 0] {
                            Issue.record(
                                "live query: \(author.id) went back from \(last[author.id]!) to \(author.born)")
                        }
                        last[author.id] = author.born
                    }
                    if results.count == ids.count && results.allSatisfy({ $0.born == rounds }) { break }
                    try? await Task.sleep(for: .microseconds(300))
                }
            } catch {
                Issue.record("live query failed: \(error)")
            }
            return last
        }

        // Instance observers coming and going, with small buffers and slow consumers; some
        // are dropped before reading anything.
        let churn = Task {
            var round = 0
            while !Task.isCancelled {
                round += 1
                guard let sequence = try? await authors.observe(ids[round % ids.count], bufferLimit: 1 + round % 4)
                else {
                    Issue.record("observe failed")
                    return
                }
                var iterator = sequence.makeAsyncIterator()
                var previous = -1
                for _ in 0..<(round % 5) {
                    guard let event = await iterator.next() else { break }
                    guard case .value(let author) = event else {
                        Issue.record("unexpected \(event)")
                        break
                    }
                    if author.born <= previous { Issue.record("instance went back from \(previous) to \(author.born)") }
                    previous = author.born
                    // Slow enough for the small buffer to overflow now and then.
                    try? await Task.sleep(for: .milliseconds(2))
                }
            }
        }

        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for round in 1...rounds {
                        for k in 0..<idsPerWriter {
                            try await authors.persist(Author(id: writer * idsPerWriter + k, name: "w", born: round))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        churn.cancel()
        await churn.value
        let seen = await finishing(changes, within: 120)
        #expect(seen == Dictionary(uniqueKeysWithValues: ids.map { ($0, rounds) }), "the change stream missed changes")
        let shown = await finishing(liveCheck, within: 120)
        #expect(
            shown == Dictionary(uniqueKeysWithValues: ids.map { ($0, rounds) }),
            "the live query did not reach the final state")
    }
}
