import Testing
import Foundation
import Folio  // only the application surface: no `store`, no engine import

/// The maintenance API an application uses instead of the engine underneath: statistics,
/// makeDurable, compaction (beside writers) and online backup.
@Suite struct MaintenanceAPITests {
    @Test func statisticsCompactionAndBackupThroughThePersistence() async throws {
        let (persistence, path, cleanup) = try diskPersistence("maintenance")
        defer { cleanup() }
        let books = persistence.datastore(for: BookFormat.self)
        for n in 0..<200 { try await books.persist(makeBook(n)) }
        for n in 0..<100 { try await books.delete(makeBook(n).id) }
        try await persistence.makeDurable()  // full durability: no commit pending, no value set

        let before = try persistence.statistics()
        #expect(before.liveBytes > 0 && before.deadBytes > 0, "deletes leave dead bytes: \(before)")
        #expect(persistence.ioStatistics.commitSyncs >= 300, "one sync per durable commit at least")

        // Compaction runs beside a transaction rather than failing.
        async let compacted = persistence.compact()
        try await persistence.perform { try await books.persist(makeBook(500)) }
        let report = try await compacted
        #expect(report.bytesAfter <= report.bytesBefore)
        let after = try persistence.statistics()
        #expect(after.deadBytes < before.deadBytes)
        #expect(try await books.count() == 101)

        let copy = path + "-backup"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let backup = try persistence.backup(to: copy)
        #expect(backup.generation > 0)
        let restored = try Persistence(readingFrom: copy)
        defer { restored.close() }
        #expect(try await restored.datastore(for: BookFormat.self).count() == 101)
        expectSound(restored)
        expectSound(persistence)
    }

    /// Verification stays usable by an application (this file imports only `Folio`): the
    /// inspection types and the engine's report are behind `@_spi(Engine)`, the verdict and
    /// its lines are not.
    @Test func verificationThroughTheApplicationSurface() async throws {
        let (persistence, _, cleanup) = try diskPersistence("maintenance-verify")
        defer { cleanup() }
        let books = persistence.datastore(for: BookFormat.self)
        for n in 0..<20 { try await books.persist(makeBook(n)) }
        let report = persistence.verify()
        #expect(report.isClean, "\(report.lines)")
        #expect(report.lines.isEmpty && report.problems.isEmpty)
    }
}
