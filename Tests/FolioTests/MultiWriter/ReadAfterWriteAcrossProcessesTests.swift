import Foundation
import Testing
import Folio
import FolioTestSupport
import LibraryExample

/// A read in this process that begins after another process's commit returned sees that
/// commit, without waiting for the follower's notification: each read outside a
/// transaction first compares the root file's slots with those it last adopted (a shared
/// mapping, Store/RootGlance.swift). Timeline: `folio-torture library-writer --step` commits
/// one book per line it is sent and says so; as soon as it has, this process reads.
@Suite(.serialized) struct ReadAfterWriteAcrossProcessesTests {
    static let commits = 20

    @Test func aWriterProcessReadsWhatAnotherJustCommitted() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/folio-read-after-write-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try await Self.startWriter(at: path)
        defer { writer.kill() }
        let library = try Library(at: path, options: PersistenceOptions(log: { _ in }))
        defer { library.persistence.close() }
        let books = library.books
        try await Self.readEachCommit(
            of: writer, count: { try await books.count() }, load: { try await books.load($0) })
    }

    @Test func aReadOnlyProcessReadsWhatAnotherJustCommitted() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/folio-read-after-write-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try await Self.startWriter(at: path)
        defer { writer.kill() }
        let persistence = try Persistence(readingFrom: path, options: PersistenceOptions(log: { _ in }))
        defer { persistence.close() }
        let books = persistence.datastore(for: LibraryExample.BookFormat.self)
        try await Self.readEachCommit(
            of: writer, count: { try await books.count() }, load: { try await books.load($0) })
    }

    /// A `library-writer` that has stored its authors and waits for its first line.
    static func startWriter(at path: String) async throws -> ChildProcess {
        let writer = try ChildProcess(
            try ProjectExecutable.path("folio-torture"), ["library-writer", path, "\(commits)", "--step"])
        try await writer.nextLine { $0.hasPrefix("commit ") && $0.hasSuffix(" 0") }
        return writer
    }

    /// Asks `writer` for one commit at a time; after each, reads at once: the new book
    /// (through the record cache, where the persistence has one) and the count.
    static func readEachCommit(
        of writer: ChildProcess, count: () async throws -> Int, load: (UUID) async throws -> LibraryExample.Book?
    ) async throws {
        #expect(try await count() == 0)
        let expected = SampleData.books(commits, authors: 10)
        for n in 1...commits {
            writer.send("")
            try await writer.nextLine { $0.hasPrefix("commit ") && $0.hasSuffix(" \(n)") }
            #expect(try await load(expected[n - 1].id)?.title == expected[n - 1].title, "book \(n) not seen")
            #expect(try await count() == n, "commit \(n) not seen by the count")
        }
        writer.closeInput()
        #expect(try await writer.waitUntilExit() == 0, "\(writer.errorOutput.suffix(600))")
    }
}
