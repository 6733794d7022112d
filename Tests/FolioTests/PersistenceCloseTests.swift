import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage

/// `Persistence.close()` racing writers (the store's own close race is in CloseRaceTests).
/// Every persist that returned is in the reopened store, which verifies clean; writers after
/// close fail with `.closed`. `FOLIO_STRESS_TESTS=1` runs more rounds.
@Suite struct PersistenceCloseTests {
    @Test(arguments: [Durability.full, .grouped(window: .zero)])
    func closeRacingPersistsKeepsEveryAcknowledgedOne(durability: FolioStorage.Durability) async throws {
        let rounds = GroupedDeliveryTests.isLong ? 100 : 8
        let path = FileManager.default.temporaryDirectory.path + "/close-race-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let options = PersistenceOptions(durability: durability, autoCompaction: nil, log: { _ in })
        var acknowledged: [Int] = []
        for round in 0..<rounds {
            let persistence = try Persistence(at: path, options: options)
            let authors = persistence.datastore(for: AuthorFormat.self)
            try await authors.persist(Author(id: round * 100_000, name: "first", born: 0))
            acknowledged.append(round * 100_000)
            let results = await withTaskGroup(of: [Int].self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        var done: [Int] = []
                        for n in 1..<10_000 {
                            let id = round * 100_000 + worker * 10_000 + n
                            do {
                                try await authors.persist(Author(id: id, name: "n", born: n))
                                done.append(id)
                            } catch {
                                return done  // closed
                            }
                        }
                        return done
                    }
                }
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(Int.random(in: 1...20)))
                    persistence.close()
                    return []
                }
                var all: [Int] = []
                for await ids in group { all += ids }
                return all
            }
            acknowledged += results
        }
        let reopened = try Persistence(at: path, options: options)
        defer { reopened.close() }
        let authors = reopened.datastore(for: AuthorFormat.self)
        var missing: [Int] = []
        for id in acknowledged where try await authors.load(id) == nil { missing.append(id) }
        #expect(missing.isEmpty, "\(missing.count) of \(acknowledged.count) acknowledged persists lost")
        expectSound(reopened)
    }
}
