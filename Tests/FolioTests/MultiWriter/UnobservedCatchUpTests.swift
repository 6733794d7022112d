import Testing
import Foundation
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport
import LibraryExample

/// A writer process nobody observes, whose record cache holds every author, adopts a long
/// streak of another process's commits (more than `Store.longestReplayUnobserved`) without
/// replaying them: its caches drop what the trees that changed held. Timeline: this
/// persistence loads every author → `folio-torture author-steps` runs 80 seeded steps, each a
/// commit changing some of authors 0..<80 → every author this persistence loads (through its
/// cache) is what a fresh persistence reads.
@Suite(.serialized) struct UnobservedCatchUpTests {
    @Test func aWriterNobodyObservesServesNoStaleRecordAfterALongStreakOfAnother() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/unobserved-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/store"
        let other = try ChildProcess(try ProjectExecutable.path("folio-torture"), ["author-steps", path, "9", "1000"])
        defer { other.kill() }
        try await other.nextLine(timeout: 60) { $0.hasPrefix("ready") }
        let quiet = PersistenceOptions(log: { _ in })
        let persistence = try Persistence(at: path, options: quiet)
        defer { persistence.close() }
        let authors = persistence.datastore(for: LibraryExample.AuthorFormat.self)
        for id in 0..<80 { _ = try await authors.load(id) }
        let start = persistence.currentToken.generation

        let steps = Int(Store.longestReplayUnobserved) + 16
        for step in 0..<steps {
            other.send("step")
            try await other.nextLine(timeout: 60) { $0.hasPrefix("step \(step) ") }
        }
        let reader = try Persistence(readingFrom: path, options: quiet)
        defer { reader.close() }
        let truth = reader.datastore(for: LibraryExample.AuthorFormat.self)
        #expect(try await truth.load(...).collect().isEmpty == false)
        for id in 0..<80 {
            let expected = try await truth.load(id)
            #expect(try await authors.load(id) == expected, "author \(id)")
        }
        #expect(persistence.currentToken.generation >= start + UInt64(steps))
    }
}
