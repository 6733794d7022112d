import Testing
import Foundation
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport
import LibraryExample

/// A read-only process's record cache against a writer in another process:
/// `folio-torture authors` writes 600 transactions, each setting authors 2k and 2k+1 to the
/// transaction number (and compacts every 100), while this process reads both of a pair by
/// identifier (point reads, which fill the cache) inside one snapshot. A stale cached value
/// would show as a pair that disagrees, or as a value older than one read before.
@Suite(.serialized) struct RecordCacheProcessTests {
    @Test func aReaderInAnotherProcessNeverSeesAStaleCachedValue() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/cache-xprocess-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let writer = try Persistence(at: path, options: PersistenceOptions(log: { _ in }))
            _ = try await writer.datastore(for: LibraryExample.AuthorFormat.self).count()
            writer.close()
        }
        let reader = try Persistence(readingFrom: path, options: PersistenceOptions(log: { _ in }))
        defer { reader.close() }
        let authors = reader.datastore(for: LibraryExample.AuthorFormat.self)
        let transactions = 600
        let child = try ChildProcess(
            try ProjectExecutable.path("folio-torture"), ["authors", path, "\(transactions)", "100"])
        var newest = Array(repeating: -1, count: 20)
        var reads = 0
        // A hang only once the bound has passed and the loop has looked again after it
        // (a starved cooperative pool can hold this task past any wall-clock bound).
        var guardian = HangGuard()
        while newest.contains(where: { $0 < transactions - 20 }) && !guardian.expired() {
            for k in 0..<20 {
                let pair = try await reader.read {
                    () async throws -> (LibraryExample.Author?, LibraryExample.Author?) in
                    (try await authors.load(2 * k), try await authors.load(2 * k + 1))
                }
                reads += 1
                guard let first = pair.0, let second = pair.1 else { continue }  // not written yet
                #expect(
                    first.born == second.born,
                    "authors \(2 * k) and \(2 * k + 1) disagree in one snapshot: \(first.born) and \(second.born)")
                #expect(first.born >= newest[k], "author \(2 * k) went back from \(newest[k]) to \(first.born)")
                newest[k] = max(newest[k], first.born)
            }
        }
        #expect(try await child.waitUntilExit() == 0, "writer failed: \(child.errorOutput)")
        #expect(
            !newest.contains(where: { $0 < transactions - 20 }),
            "the reader did not follow the writer to its last transactions: \(newest)")
        let statistics = try #require(reader.core.records?.statistics)
        #expect(statistics.hits > 0, "\(reads) pair reads and never a cache hit")
    }
}
