import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage
import FolioTestSupport
import LibraryExample

/// Docs/Guide.md cannot rot: its Swift blocks must appear in Sources/LibraryExample, which
/// this test runs.
@Suite struct GuideTests {
    static let root = ProjectExecutable.packageRoot()

    @Test func everyGuideBlockIsExampleCode() throws {
        let blocks = try DocumentedCode.swiftBlocks(inFile: "\(Self.root)/Docs/Guide.md")
        let directory = "\(Self.root)/Sources/LibraryExample"
        let sources = try FileManager.default.contentsOfDirectory(atPath: directory).map {
            DocumentedCode.normalized(try String(contentsOfFile: "\(directory)/\($0)", encoding: .utf8))
        }
        var checked = 0
        for block in blocks where !block.hasPrefix("// Package.swift") {
            let lines = DocumentedCode.normalized(block)
            #expect(
                sources.contains { DocumentedCode.source($0, contains: lines) },
                "Guide block not found in Sources/LibraryExample:\n\(block)")
            checked += 1
        }
        #expect(checked >= 15)
    }

    @Test func theTourRuns() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/guide-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let report = try await GuideTour.run(at: path)
        #expect(report.rejectedPublish == .unknownAuthor(999))
        #expect(report.refusedImports.count == 1)
        if case .uniqueIndexConflict? = report.refusedImports.first {} else { Issue.record("\(report.refusedImports)") }
        #expect(report.byISBN?.authorIDs == [3, 40])
        // Author 3's release-1 books, today's books, and the book published with a co-author.
        let expected =
            SampleData.oldBooks(300, offset: 10_000, authors: 40).filter { $0.authorID == 3 }.count
            + SampleData.books(2_000, authors: 40).dropFirst().filter { $0.authorIDs.contains(3) }.count + 1
        #expect(report.byAuthor == expected)
        #expect(!report.shelf.isEmpty && report.shelf.allSatisfy { $0.contains("Glass") })
        #expect(report.newestYears == report.newestYears.sorted(by: >) && report.newestYears.count == 5)
        #expect(!report.recentByAuthor.isEmpty && report.recentByAuthor.count <= 10)
        #expect(report.recentByAuthor.allSatisfy { $0.authorIDs.contains(3) && $0.year >= 1990 })
        #expect(
            report.recentByAuthor.map(\.title)
                == report.recentByAuthor.map(\.title).sorted {
                    $0.localizedStandardCompare($1) == .orderedAscending
                })
        // The many-to-many lookup is narrower than a half-open range of years.
        #expect(
            report.plan?.description
                == "index authors (authorIDs contains 3), then filter by the predicate, then sort by title")
        // read(at:) before the merge sees author 39; the book now names 38 instead.
        let authors = try #require(report.authorsBeforeMerge)
        #expect(authors.then.contains(39) && !authors.now.contains(39) && authors.now.contains(38))
        // changes(from:) names exactly the books the merge rewrote, as they were and are.
        #expect(report.changedByMerge.count == report.mergedBooks && report.mergedBooks > 0)
        #expect(
            report.changedByMerge.allSatisfy {
                $0.kind == .updated && $0.oldValue!.authorIDs.contains(39) && !$0.newValue!.authorIDs.contains(39)
            })
        // A named action, undone: the book is gone again.
        #expect(report.undoneAction == "Add “Undoable”")
        #expect(report.retention == .duration(.seconds(30 * 86_400)))
        #expect(report.booksAtCheckpoint.now == report.booksAtCheckpoint.then + 5)
        #expect(report.booksAtCheckpoint.afterCompaction == report.booksAtCheckpoint.then)
        #expect(report.undoneImport == "Import 5 books")
        #expect(report.replicaCaughtUp)
        #expect(report.restoredFromReplica.books + 1 == report.restoredFromReplica.booksNow)
        #expect(report.afterUndo.during == report.afterUndo.before + 1)
        #expect(report.afterUndo.after == report.afterUndo.before)
        // update(where:) in a transaction: every book of author 39 now names author 38.
        let old = SampleData.oldBooks(300, offset: 10_000, authors: 40)
        let today = SampleData.books(2_000, authors: 40).dropFirst()
        let named = { (ids: Set<Int>) in
            old.filter { ids.contains($0.authorID) }.count + today.filter { !ids.isDisjoint(with: $0.authorIDs) }.count
        }
        #expect(report.mergedBooks == named([39]) && report.mergedBooks > 0)
        #expect(report.afterMerge.duplicateBooks == 0)
        #expect(report.afterMerge.keptBooks == named([38, 39]))
        #expect(report.afterMerge.authors == 40, "40 authors and the newcomer, less the merged one")
        #expect(report.oldRecordsMigrated == 300)
        #expect(report.progress.first == .evaluating && report.progress.last == .complete(total: 300))
        #expect(report.booksAfterUpgrade == 2_300)
        #expect(report.helperCount == 2_300)
        #expect(report.liveCounts == [expected, expected + 1])
        #expect(report.observableCounts == [expected, expected + 1])
        #expect(report.helperSaw == .created)
        #expect(report.memoryCount == 1)
        // The refused book was not counted; the one published later was, as the helper saw.
        #expect(report.publishedCount == 1)
        #expect(report.valueKeys == ["library/display", "library/lastShelf", "library/publishedCount"])
        #expect(report.helperShelf == "glass")
        #expect(report.observedCounts == [1, 2])
        let persistence = try Persistence(readingFrom: path)
        #expect(persistence.verify().isClean)
        persistence.close()
    }
}
