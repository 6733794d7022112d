import Foundation
import Observation
import Synchronization

/// A live query's results as an `Observable` object, for SwiftUI views and anything else
/// that uses the Observation framework: ``results`` changes exactly when the live query's
/// results do, on the main actor (or on an actor you give), and ``phase`` says whether the
/// first results are still loading or the query failed.
///
/// ```swift
/// let recent = ObservableResults(
///     books, where: #Predicate { $0.year >= 2000 }, sortBy: [SortDescriptor(\.title)])
/// withObservationTracking {
///     print(recent.results.count)  // reading registers the dependency
/// } onChange: {
///     print("changes on the main actor")  // once, before the next change is made
/// }
/// ```
///
/// It follows ``Datastore/liveQuery(where:sortBy:limit:)``, so a commit that leaves the
/// results as they were (one to another datastore, or to records outside the predicate)
/// changes nothing here and re-renders no view. In SwiftUI, declare a `@LiveQuery`
/// property, which makes one once and keeps it (Apple platforms only), or keep one made
/// once (by a parent, or in `.task`) in `@State`: SwiftUI evaluates a `@State` initial
/// value each time it re-creates the view, and this initializer starts a query.
///
/// **Isolation.** Every change of ``results`` and ``phase``, and so every observer's
/// `onChange`, happens on one actor: `MainActor.shared` by default, or the `isolation` given
/// to the initializer. The object itself is `Sendable` and not bound to that actor: its
/// state is behind a lock, so it can be read, and its query replaced, from anywhere. A
/// query is prepared off that actor (a first use may build indexes); only the hand-over of
/// each new result array runs on it.
///
/// **Lifetime.** The live query runs while the object lives: releasing the object, calling
/// ``stop()``, or replacing the query (``replaceQuery(where:sortBy:limit:)``) cancels it
/// and ends its subscription.
///
/// **Failure.** If the query cannot start (an invalid `limit`, a datastore that fails to
/// prepare) or a changed record fails to decode, ``phase`` becomes
/// ``Phase/failed(_:)`` and ``results`` keeps the last results delivered. The object does
/// not retry by itself: the same record would fail again at once. Call ``restart()`` once
/// the cause is fixed.
public final class ObservableResults<Format: DatastoreFormat>: Observable, Sendable {
    /// The datastore's instance type.
    public typealias Instance = Format.Instance

    /// Makes the live query an object follows.
    typealias LiveQueryFactory = @Sendable (LiveResultsQuery<Instance>) async throws(FolioError) -> LiveResults<Format>

    struct State {
        var results: [Instance] = []
        var phase: Phase = .loading
        var query: LiveResultsQuery<Instance>
        var makeLiveQuery: LiveQueryFactory?
        /// Bumped by every start and stop. Invariant: only the task started with the current
        /// generation changes `results` and `phase`, so a replaced query's late results
        /// never land over the new query's.
        var generation: UInt64 = 0
        var task: Task<Void, Never>?
    }

    let state: Mutex<State>
    let registrar = ObservationRegistrar()
    /// The actor every change of `results` and `phase` happens on.
    let isolation: any Actor

    /// The results of `datastore.liveQuery(where: predicate, sortBy: sortBy, limit: limit)`,
    /// followed from now until the object is released or stopped.
    ///
    /// ```swift
    /// // Changes happen on the main actor.
    /// let shelf = ObservableResults(
    ///     books, where: #Predicate { $0.title.starts(with: "G") },
    ///     sortBy: [SortDescriptor(\.title)], limit: 50)
    ///
    /// // Changes happen on `indexer`, an actor of the app.
    /// let early = ObservableResults(authors, where: #Predicate { $0.born < 1900 }, isolation: indexer)
    /// ```
    ///
    /// - Parameters:
    ///   - datastore: The datastore to query, read-write or read-only.
    ///   - predicate: Which instances to include; nil includes every instance.
    ///   - sortBy: The order of the results; ties, and no descriptors, in identifier order.
    ///   - limit: At most this many results, nil for all. A negative limit fails the
    ///     query (``phase`` becomes ``Phase/failed(_:)`` with `invalidArgument`).
    ///   - isolation: The actor ``results`` and ``phase`` change on: the main actor unless
    ///     you give another.
    public convenience init<Access: AccessMode>(
        _ datastore: Datastore<Format, Access>, where predicate: Predicate<Instance>? = nil,
        sortBy: [SortDescriptor<Instance>] = [], limit: Int? = nil, isolation: any Actor = MainActor.shared
    ) {
        self.init(
            query: LiveResultsQuery(predicate: predicate, sortBy: sortBy, limit: limit), isolation: isolation)
        follow(Self.liveQueryFactory(datastore))
    }

    /// An object that follows nothing yet (phase `.loading`, no results) until ``follow(_:)``
    /// gives it its live queries: for a SwiftUI property, whose datastore comes later, from
    /// the environment.
    init(query: LiveResultsQuery<Instance>, isolation: any Actor) {
        self.isolation = isolation
        state = Mutex(State(query: query))
    }

    deinit {
        // The task holds the object weakly, so it cannot keep it alive; cancelling it ends
        // its iteration, which releases the live query's subscription.
        state.withLock { $0.task }?.cancel()
    }

    /// The query's results, in its order: empty until the first results arrive, then
    /// replaced each time the live query yields (never changed in place). After a failure,
    /// the last results delivered.
    ///
    /// ```swift
    /// List(shelf.results, id: \.id) { book in Text(book.title) }
    /// ```
    public var results: [Instance] {
        registrar.access(self, keyPath: \.results)
        return state.withLock { $0.results }
    }

    /// Whether the first results are still loading, have arrived, or the query failed.
    ///
    /// ```swift
    /// switch shelf.phase {
    /// case .loading: ProgressView()
    /// case .loaded: BookList(books: shelf.results)
    /// case .failed(let error): Text(error.description)
    /// }
    /// ```
    public var phase: Phase {
        registrar.access(self, keyPath: \.phase)
        return state.withLock { $0.phase }
    }

    /// The error that ended the query, or nil while it loads or runs (a shorthand for
    /// ``phase``'s ``Phase/failed(_:)``).
    ///
    /// ```swift
    /// if let error = shelf.error { Text("Cannot show the shelf: \(error)") }
    /// ```
    public var error: FolioError? {
        if case .failed(let error) = phase { return error }
        return nil
    }

    /// Replaces the query, as a view's search text or sort order changes: the current live
    /// query is cancelled and the new one started. ``phase`` goes back to
    /// ``Phase/loading``, and ``results`` keeps the old query's results until the new
    /// query's first results replace them (a list does not flash empty while typing).
    ///
    /// ```swift
    /// .onChange(of: searchText) {
    ///     let text = searchText
    ///     shelf.replaceQuery(where: #Predicate { $0.title.localizedStandardContains(text) })
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - predicate: Which instances to include; nil includes every instance.
    ///   - sortBy: The order of the results; ties, and no descriptors, in identifier order.
    ///   - limit: At most this many results, nil for all.
    public func replaceQuery(
        where predicate: Predicate<Instance>? = nil, sortBy: [SortDescriptor<Instance>] = [], limit: Int? = nil
    ) {
        start(replacingQueryWith: LiveResultsQuery(predicate: predicate, sortBy: sortBy, limit: limit))
    }

    /// Runs the current query again from the start, after a failure (once its cause is
    /// fixed) or after ``stop()``. ``phase`` goes back to ``Phase/loading`` until the
    /// results arrive.
    ///
    /// ```swift
    /// if shelf.error != nil { Button("Try again") { shelf.restart() } }
    /// ```
    public func restart() {
        start(replacingQueryWith: nil)
    }

    /// Stops following the query: its live query is cancelled and its subscription ends.
    /// ``results`` and ``phase`` stay as they are; ``restart()`` follows the query again.
    /// Releasing the object stops it too.
    ///
    /// ```swift
    /// .onDisappear { shelf.stop() }
    /// ```
    public func stop() {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.generation &+= 1
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
    }
}

extension ObservableResults {
    /// What an ``ObservableResults`` knows of its query's results.
    public enum Phase: Sendable, Equatable {
        /// The query's first results have not arrived yet (at first, and after
        /// ``ObservableResults/replaceQuery(where:sortBy:limit:)`` or
        /// ``ObservableResults/restart()``).
        case loading
        /// ``ObservableResults/results`` holds the query's results, and follows them.
        case loaded
        /// The query could not start, or it ended with this error; it is not retried
        /// until ``ObservableResults/restart()``.
        case failed(FolioError)
    }
}

/// What an ``ObservableResults`` asks its datastore for: a predicate (nil for every
/// instance), a sort and a limit.
struct LiveResultsQuery<Instance: Sendable>: Sendable {
    var predicate: Predicate<Instance>?
    var sortBy: [SortDescriptor<Instance>]
    var limit: Int?
}
