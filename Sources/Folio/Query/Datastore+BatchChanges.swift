import Foundation
import FolioStorage

/// Changes to every instance a predicate matches, in one call: one statement of one
/// transaction (the enclosing `perform`'s, or a transaction of its own), so every index
/// stays consistent and observers see one commit. The matches are found first, through
/// the query planner (Datastore+Query.swift), then changed.
extension Datastore where Access == ReadWrite {
    /// Applies `change` to every instance matching `predicate` and stores the results;
    /// returns how many. `change` must keep the identifier (a new identifier is a new
    /// instance: persist it and delete the old one); if it does not, nothing is changed.
    ///
    /// A unique index is checked on the state the whole call leaves, as SQL's statement-level
    /// constraints are: matched instances may exchange unique values; a value held by an
    /// instance the call does not change, or given to two instances, is
    /// ``FolioError/uniqueIndexConflict(datastore:index:value:existing:new:)``, and nothing
    /// is changed.
    ///
    /// ```swift
    /// try await messages.update(where: #Predicate { $0.threadID == thread && !$0.read }) { $0.read = true }
    /// ```
    @discardableResult
    nonisolated(nonsending) public func update(
        where predicate: Predicate<Instance>,
        _ change: (inout Instance) -> Void
    ) async throws(FolioError) -> Int {
        try await withWrite { (transaction) throws(FolioError) -> Int in
            // Each match is changed as it is read: `change` cannot write (it is synchronous),
            // and nothing is written until every match is read, so every match is read
            // before anything changes.
            let next = try matches(of: predicate, in: transaction)
            var changed: [(identifier: [UInt8], instance: Instance)] = []
            while let match = try next() {
                var instance = match.instance
                change(&instance)
                guard instance[keyPath: schema.identifierPath].keyBytes == match.key else {
                    throw .encodingFailed(
                        datastore: key, identifier: schema.describe(identifierKey: match.key),
                        reason:
                            "update(where:) changed the identifier; persist the new instance and delete the old one instead"
                    )
                }
                changed.append((match.key, instance))
            }
            // Every record in one pass, every index in one pass each.
            try IndexMaintenance.storeAll(changed, schema: schema, in: transaction)
            return changed.count
        }
    }

    /// Deletes every instance matching `predicate`; returns how many.
    @discardableResult
    nonisolated(nonsending) public func delete(where predicate: Predicate<Instance>) async throws(FolioError) -> Int {
        try await withWrite { (transaction) throws(FolioError) -> Int in
            // An exact plan names the matches without decoding a record; a delete reads only
            // each record's header (its stored index keys).
            let plan = try self.plan(
                predicate, sortBy: [], limit: nil, offset: 0, source: .transaction(transaction), usable: nil)
            var exact = try QueryExecution(schema: schema, core: core)
                .exactIdentifiers(of: plan, hasPredicate: true, source: .transaction(transaction))
            if exact == nil { exact = try matching(predicate, in: transaction).map(\.key) }
            return try IndexMaintenance.deleteAll(exact ?? [], schema: schema, in: transaction)
        }
    }

    /// Deletes the instances with these identifiers (those that exist); returns how many.
    ///
    /// A range of identifiers (`delete(1...250)`, `delete(5...)`) is a range, not a list:
    /// it calls the ``IndexRange`` form of `delete`, which deletes what lies in the range
    /// without enumerating it.
    // Integer ranges are sequences too; disfavoured, this overload yields to the range one,
    // so `delete(a..<b)` keeps its meaning and `delete(5...)` never enumerates forever.
    @_disfavoredOverload
    @discardableResult
    nonisolated(nonsending) public func delete(_ identifiers: some Sequence<Identifier>) async throws(FolioError) -> Int
    {
        let keys = identifiers.map(\.keyBytes)
        return try await withWrite { (transaction) throws(FolioError) -> Int in
            try IndexMaintenance.deleteAll(keys, schema: schema, in: transaction)
        }
    }

    /// The matches of `predicate` in the transaction as it is, one by one.
    private func matches(
        of predicate: Predicate<Instance>, in transaction: WriteTransaction
    ) throws(FolioError) -> () throws(FolioError) -> (key: [UInt8], instance: Instance)? {
        let plan = try self.plan(
            predicate, sortBy: [], limit: nil, offset: 0, source: .transaction(transaction), usable: nil)
        return try QueryExecution(schema: schema, core: core).matches(
            of: plan, predicate: predicate, source: .transaction(transaction))
    }

    /// Every match of `predicate` in the transaction as it is, read before anything changes.
    private func matching(
        _ predicate: Predicate<Instance>, in transaction: WriteTransaction
    ) throws(FolioError) -> [(key: [UInt8], instance: Instance)] {
        let next = try matches(of: predicate, in: transaction)
        var matches: [(key: [UInt8], instance: Instance)] = []
        while let match = try next() { matches.append(match) }
        return matches
    }
}
