import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage
import FolioTestSupport

/// `folio verify STORE`.
@Suite struct VerifyTests {
    @Test func aSoundStoreVerifies() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let fixture = try await LibraryFixture.make(at: directory.child("library"))
        let run = try folio("verify", fixture.path)
        #expect(run.status == 0, "\(run)")
        #expect(run.lines.first?.hasPrefix("verifying \(fixture.path) at generation ") == true)
        #expect(run.lines.last == "no problems found")
        let checked = try #require(run.lines.dropLast().last)
        #expect(checked.contains("\(fixture.allBooks.count + fixture.authors.count) records"), "\(checked)")
        #expect(!run.output.contains("problem:"))
    }

    /// A flipped byte in a live page: verify exits 1 and names the file and the offset of
    /// the damaged page, which holds the flipped byte.
    @Test func verifyFindsAFlippedByteAndNamesWhere() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let fixture = try await LibraryFixture.make(at: directory.child("library"), compacted: true)
        let file = try currentSnapshot(of: fixture.path)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        let flipped = bytes.count / 2
        bytes[flipped] ^= 0x5A
        try bytes.write(to: URL(fileURLWithPath: file))

        let run = try folio("verify", fixture.path)
        #expect(run.status == 1, "\(run)")
        let problems = run.lines.filter { $0.hasPrefix("problem: ") }
        #expect(!problems.isEmpty)
        // Each problem is one line naming the file and the page's offset.
        let located = problems.compactMap { line -> UInt64? in
            guard let range = line.range(of: #"\#(file) @\d+"#, options: .regularExpression) else { return nil }
            return UInt64(line[range].split(separator: "@").last!)
        }
        let offset = try #require(located.first, "\(problems)")
        #expect(
            offset <= UInt64(flipped) && UInt64(flipped) - offset < UInt64(StorageLimits.maximumPageSize) * 2,
            "\(problems)")
        #expect(problems.contains { $0.contains("checksum") }, "\(problems)")
        #expect(run.lines.last?.hasSuffix("found") == true && run.lines.last != "no problems found")
    }

    /// The current root names a snapshot file whose header is damaged: the store opens at the
    /// previous root, and verify says so (exit 1) instead of passing the older generation.
    @Test func verifyReportsAnUnreadableCurrentGeneration() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("library")
        let persistence = try Persistence(at: path, options: PersistenceOptions(autoCompaction: nil, log: { _ in }))
        let blobs = persistence.datastore(for: BlobFormat.self)
        try await blobs.persist(Blob(id: 1, text: "one"))
        let rootPath = path + "/root"
        let before = [UInt8](try Data(contentsOf: URL(fileURLWithPath: rootPath)))
        try persistence.store.compact()  // keeps file 1 for the retention period
        persistence.close()
        // Compaction writes its root into both slots; put the root before it back into slot 1
        // (as a version 1 store's slot 1 holds it), so that an older root in file 1 is there.
        func generation(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
            bytes[(offset + 16)..<(offset + 24)].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        let newestBefore = generation(before, 4096) > generation(before, 0) ? 4096 : 0
        var spliced = [UInt8](try Data(contentsOf: URL(fileURLWithPath: rootPath)))
        spliced.replaceSubrange(4096..<4224, with: before[newestBefore..<(newestBefore + 128)])
        try Data(spliced).write(to: URL(fileURLWithPath: rootPath))
        // Damage the current file's header: the generation slot 0 names cannot be read.
        let current = try FileHandle(forUpdatingAtPath: try currentSnapshot(of: path)).unwrapped()
        try current.write(contentsOf: Data("DAMAGED!".utf8))
        try current.close()

        let run = try folio("verify", path)
        #expect(run.status == 1, "\(run)")
        #expect(run.output.contains("problem: \(path)/root @0: the newest root slot names generation"), "\(run)")
        #expect(run.errors.contains("is unusable"), "the opening is reported too: \(run)")
    }

    /// A store written by the engine alone (the shipped engine-basic fixtures) is not a
    /// broken Folio store: verify says what it is, runs the engine's checks and passes,
    /// whichever format version wrote it (v3 with commits recording a tree wholesale).
    @Test(arguments: ["v1", "v2", "v3"])
    func anEngineLevelStoreVerifies(version: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("engine-basic")
        try FileManager.default.copyItem(
            atPath: ProjectExecutable.packageRoot() + "/Fixtures/\(version)/engine-basic", toPath: path)
        let run = try folio("verify", path)
        #expect(run.status == 0, "\(run)")
        #expect(
            run.lines.contains(
                "engine-level store: no Folio datastores or values (no folio/catalog), so only the engine's checks apply"
            ),
            "\(run)")
        #expect(!run.output.contains("problem:"), "\(run)")
        #expect(run.lines.contains { $0.hasPrefix("checked ") && $0.contains("in 2 trees") }, "\(run)")
        #expect(run.lines.last == "no problems found")
    }

    /// A Folio store with a tree of no datastore stays a finding: only a store with no
    /// Folio tree at all is engine-level.
    @Test func aStrayTreeInAFolioStoreIsStillAProblem() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("library")
        let persistence = try Persistence(at: path, options: quietOptions)
        try await persistence.datastore(for: BlobFormat.self).persist(Blob(id: 1, text: "one"))
        try persistence.store.write { try $0.put([1], for: [1], in: "stray") }
        persistence.close()
        let run = try folio("verify", path)
        #expect(run.status == 1, "\(run)")
        #expect(
            run.lines.contains("problem: datastore stray: tree stray belongs to no datastore in the catalog"), "\(run)")
        #expect(!run.output.contains("engine-level"), "\(run)")
    }

    /// Verify is read-only: it runs while another process writes, and passes.
    @Test func verifyBesideAWriterInAnotherProcess() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("library")
        let writer = try ChildProcess(try ProjectExecutable.path("folio-torture"), ["library-writer", path, "100000"])
        defer { writer.kill() }
        try writer.waitForLine { $0.hasPrefix("commit ") && Int($0.split(separator: " ")[2])! >= 5 }
        for _ in 0..<3 {
            let run = try folio("verify", "--quiet", path)
            #expect(run.status == 0, "\(run)")
        }
        writer.closeInput()
        #expect(try writer.wait() == 0, "\(writer.errorOutput)")
    }
}

extension Optional {
    func unwrapped(sourceLocation: SourceLocation = #_sourceLocation) throws -> Wrapped {
        try #require(self, sourceLocation: sourceLocation)
    }
}
