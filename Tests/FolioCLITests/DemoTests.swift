import Testing
import Foundation

/// `folio demo`: the project's main job, on an embedded default.
@Suite struct DemoTests {
    /// With no argument it builds a store in a fresh temporary directory, exits 0, reports
    /// every step, and ends with the commands to look at the store, which `verify` passes.
    @Test func demoLeavesAStoreThatVerifies() throws {
        let run = try folio("demo", "--quiet")
        #expect(run.status == 0, "\(run)")
        #expect(run.errors.isEmpty, "--quiet: no progress, and nothing else on stderr: \(run.errors)")
        let first = try #require(run.lines.first)
        let prefix = "Folio demo: the library of Docs/Guide.md (books and authors), in "
        #expect(first.hasPrefix(prefix))
        let path = String(first.dropFirst(prefix.count))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(path.contains("/folio-demo-"))
        for step in [
            "release 1 stored", "upgrade:", "books written in one transaction", "by ISBN", "many-to-many",
            "range over a computed index",
            "query #Predicate { $0.authorIDs.contains(3) && $0.year >= 1990 }",
            "explain that query: index authors (authorIDs contains 3), then filter by the predicate, then sort by title",
            "merged author 39 into 38: update(where:", "published a book with a new co-author", "was refused",
            "values by key: library/publishedCount = 1", "withdrew", "compacted:", "no problems", "store statistics",
            "generation",
        ] {
            #expect(run.output.contains(step), "missing step \(step)")
        }
        // Every step line starts with its time.
        let stepLines = run.lines.dropFirst(2).prefix { !$0.isEmpty }
        #expect(stepLines.count >= 15)
        #expect(
            stepLines.allSatisfy { $0.range(of: #"^ *[0-9.]+ (ms|s)  "#, options: .regularExpression) != nil },
            "\(stepLines)")
        #expect(
            Array(run.lines.suffix(6)) == [
                "Look at the store it left:", "  folio info \(path)", "  folio verify \(path)",
                "  folio dump \(path) authors --limit 3",
                "  folio dump \(path) books --index year --from 1990 --to 1991 --limit 5",
                "  folio dump \(path) --values",
            ])
        // The statistics name the snapshot files the store holds, and say a replaced one is
        // kept only when it is.
        let snapshots = try FileManager.default.contentsOfDirectory(atPath: path + "/snapshots").filter {
            $0.hasSuffix(".folio")
        }
        let files = try #require(run.lines.first { $0.hasPrefix("  files ") })
        #expect(files.contains(" \(snapshots.count) snapshot file"), "\(files), on disk: \(snapshots)")
        #expect(files.contains("the replaced one is kept") == (snapshots.count > 1), "\(files), on disk: \(snapshots)")

        let verify = try folio("verify", path)
        #expect(verify.status == 0, "\(verify)")
        #expect(verify.lines.last == "no problems found")
        let info = try folio("info", path)
        #expect(info.status == 0, "\(info)")
        #expect(info.output.contains("datastore authors") && info.output.contains("datastore books"))
        let dump = try folio(
            "dump", path, "books", "--index", "year", "--from", "1990", "--to", "1991", "--limit", "5", "--json")
        #expect(dump.status == 0 && dump.lines.count == 5, "\(dump)")
    }

    /// The demo builds a new store: it refuses a directory that holds something.
    @Test func demoRefusesANonEmptyDirectory() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        _ = FileManager.default.createFile(atPath: directory.child("notes.txt"), contents: Data("keep".utf8))
        let run = try folio("demo", directory.path)
        expectOneLineError(run, status: 3, containing: "is not an empty directory")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["notes.txt"])
    }
}
