import Foundation
import Observation

// How an ObservableResults follows its live query: one task per start, which prepares the
// query off the object's actor and hands each result array over on it.

extension ObservableResults {
    /// Follows the live queries `makeLiveQuery` makes for the current query, from now on.
    func follow(_ makeLiveQuery: @escaping LiveQueryFactory) {
        state.withLock { $0.makeLiveQuery = makeLiveQuery }
        start(replacingQueryWith: nil)
    }

    /// The live queries of `datastore`: over the predicate, or over every instance.
    static func liveQueryFactory<Access: AccessMode>(_ datastore: Datastore<Format, Access>) -> LiveQueryFactory {
        { query throws(FolioError) in
            try await datastore.liveQuery(
                where: query.predicate ?? #Predicate<Instance> { _ in true }, sortBy: query.sortBy, limit: query.limit)
        }
    }

    /// Cancels the running query, if any, and starts `newQuery` (nil: the current one again).
    func start(replacingQueryWith newQuery: LiveResultsQuery<Instance>?) {
        let (previous, generation, query, makeLiveQuery) = state.withLock { state in
            if let newQuery { state.query = newQuery }
            state.generation &+= 1
            defer { state.task = nil }
            return (state.task, state.generation, state.query, state.makeLiveQuery)
        }
        previous?.cancel()
        guard let makeLiveQuery else { return }
        let owner = WeakReference(self)
        let actor = isolation
        // Not isolated to `actor`: preparing the query reads the store (and may build
        // indexes), and waiting for results must not depend on the actor either: a cancelled
        // task ends its iteration, and so its subscription, even while the actor is busy.
        // Only the hand-overs hop to it.
        let task = Task {
            await Self.markLoading(owner, generation, isolation: actor)
            do throws(FolioError) {
                let live = try await makeLiveQuery(query)
                for try await results in live {
                    guard await Self.deliver(results, owner, generation, isolation: actor) else { return }
                }
            } catch {
                await Self.markFailed(owner, error, generation, isolation: actor)
            }
        }
        // A stop or another start between the two locks: this task is already superseded.
        let superseded = state.withLock { state -> Bool in
            guard state.generation == generation else { return true }
            state.task = task
            return false
        }
        if superseded { task.cancel() }
    }

    /// Hands one result array to the object, on its actor; false if the object is gone.
    /// The task holds the object strongly only here: between results it holds it weakly,
    /// so releasing it cancels the task (see deinit).
    private static func deliver(
        _ results: [Instance], _ owner: WeakReference<ObservableResults>, _ generation: UInt64,
        isolation: isolated any Actor
    ) -> Bool {
        guard let object = owner.object else { return false }
        object.change(\.results, in: generation) { $0.results = results }
        object.change(\.phase, in: generation, unlessPhaseIs: .loaded) { $0.phase = .loaded }
        return true
    }

    private static func markLoading(
        _ owner: WeakReference<ObservableResults>, _ generation: UInt64, isolation: isolated any Actor
    ) {
        owner.object?.change(\.phase, in: generation, unlessPhaseIs: .loading) { $0.phase = .loading }
    }

    private static func markFailed(
        _ owner: WeakReference<ObservableResults>, _ error: FolioError, _ generation: UInt64,
        isolation: isolated any Actor
    ) {
        owner.object?.change(\.phase, in: generation) { $0.phase = .failed(error) }
    }

    /// Changes one observed property, telling its observers first, if the object is still
    /// at `generation` and its phase is not `skipped` (a phase is announced only when it
    /// changes). Called on the object's actor only, so every observer's `onChange` runs there.
    private func change<Value>(
        _ keyPath: KeyPath<ObservableResults, Value>, in generation: UInt64,
        unlessPhaseIs skipped: Phase? = nil, _ body: (inout State) -> Void
    ) {
        guard state.withLock({ $0.generation == generation && (skipped == nil || $0.phase != skipped) }) else {
            return
        }
        // Checked again inside: a stop or new query from another thread in between wins (its
        // observers then see one change notice too many, never a stale value).
        registrar.withMutation(of: self, keyPath: keyPath) {
            state.withLock { state in
                if state.generation == generation { body(&state) }
            }
        }
    }
}

/// A reference that does not keep its object alive: what a following task holds.
struct WeakReference<Object: AnyObject & Sendable>: Sendable {
    weak let object: Object?

    init(_ object: Object) {
        self.object = object
    }
}
