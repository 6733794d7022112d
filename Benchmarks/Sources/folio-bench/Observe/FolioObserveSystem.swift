import Foundation
import Folio

/// Folio's side of the `observe` suite: live queries and instance observation, consumed as
/// the `AsyncSequence`s Folio returns.
extension FolioCrudSystem: ObserveSystem {
    static let observationNote = "Folio: liveQuery / observe(id) AsyncSequences, each iterated by its own task"

    /// `liveQuery(id...id)`: a live query over one identifier.
    func watchResults(id: Int64, until done: ([CrudRecord]) throws -> Bool) async throws {
        for try await results in try await records.liveQuery(id...id) {
            if try done(results) { return }
        }
        throw BenchError.wrongResult("Folio live query of id \(id) ended")
    }

    /// `observe(id)`: the instance's value now and after each change; `.deleted` is nil.
    func watchObject(id: Int64, until done: (CrudRecord?) throws -> Bool) async throws {
        for await event in try await records.observe(id) {
            switch event {
            case .value(let record): if try done(record) { return }
            case .deleted: if try done(nil) { return }
            case .failure(let error): throw error
            }
        }
        throw BenchError.wrongResult("Folio observation of id \(id) ended")
    }

    /// `liveQuery(range, from: \.priority)`: a live query over a range of the index.
    func watchResults(priorityIn range: Range<Int>, until done: ([CrudRecord]) throws -> Bool) async throws {
        for try await results in try await records.liveQuery(range, from: \.priority) {
            if try done(results) { return }
        }
        throw BenchError.wrongResult("Folio live query of priorities \(range) ended")
    }

    /// `liveQuery(where: id == x)`: case 1 as a predicate.
    func watchResults(matchingID id: Int64, until done: ([CrudRecord]) throws -> Bool) async throws {
        for try await results in try await records.liveQuery(where: #Predicate { $0.id == id }) {
            if try done(results) { return }
        }
        throw BenchError.wrongResult("Folio predicate live query of id \(id) ended")
    }

    /// `liveQuery(where: lo..<hi contains priority, sortBy: priority)`: case 3 as a predicate.
    func watchResults(priorityMatching range: Range<Int>, until done: ([CrudRecord]) throws -> Bool) async throws {
        let low = range.lowerBound, high = range.upperBound
        for try await results in try await records.liveQuery(
            where: #Predicate { (low..<high).contains($0.priority) },
            sortBy: [SortDescriptor(\.priority)])
        {
            if try done(results) { return }
        }
        throw BenchError.wrongResult("Folio predicate live query of priorities \(range) ended")
    }

    /// One `perform` persisting every record.
    func updateAll(_ updated: [CrudRecord]) async throws {
        let datastore = records
        try await persistence.perform {
            for record in updated { try await datastore.persist(record) }
        }
    }

    /// Nothing to wait for: an observer is registered with the persistence before its
    /// first value is delivered.
    func settle() async throws {}
}
