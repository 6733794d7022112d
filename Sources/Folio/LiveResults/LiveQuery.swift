#if canImport(SwiftUI)
import Foundation
import SwiftUI
import Synchronization

// SwiftUI exists on Apple platforms only, so the Linux CI compiles none of this file: it is
// kept to the SwiftUI glue. What it shows is an ObservableResults, which every platform
// builds and tests (Tests/FolioTests/LiveResults).

extension EnvironmentValues {
    /// The persistence ``LiveQuery`` properties query when they are given no datastore. Set
    /// it once, high in the view hierarchy:
    ///
    /// ```swift
    /// ContentView().environment(\.folioPersistence, library.persistence)
    /// ```
    ///
    /// A read-only persistence (a widget, an extension) gives its datastore to the
    /// ``LiveQuery`` instead.
    @Entry public var folioPersistence: Persistence<ReadWrite>? = nil
}

/// A view's live query, in the spirit of SwiftData's `@Query`: the instances of a datastore
/// that match a predicate, in order, kept up to date. The view renders again when the
/// results change, and only then: a commit that leaves them as they were re-renders nothing.
///
/// ```swift
/// struct ShelfView: View {
///     @LiveQuery(BookFormat.self, where: #Predicate<Book> { $0.year >= 2000 }, sortBy: [SortDescriptor(\.title)])
///     private var books
///
///     var body: some View {
///         switch $books.phase {
///         case .loading: ProgressView()
///         case .failed(let error): Text(error.description)
///         case .loaded: List(books, id: \.id) { Text($0.title) }
///         }
///     }
/// }
/// ```
///
/// The datastore comes from the environment's `EnvironmentValues.folioPersistence`,
/// or from the initializer that takes one (in the view's `init`:
/// `_books = LiveQuery(datastore, where: …)`). Without either, the phase is
/// ``ObservableResults/Phase/failed(_:)`` with `invalidArgument`.
///
/// The query is the one the property was first declared with: SwiftUI keeps the first
/// ``ObservableResults`` across the view's re-creations (predicates cannot be compared, so
/// a new `init` cannot tell whether its query changed). To change it, as a search field's
/// text changes, call `$books.replaceQuery(where:sortBy:limit:)`. The projected value
/// (`$books`) is the ``ObservableResults``: its phase, error, `restart()` and `stop()`.
/// Results change on the main actor. The query stops when the view leaves the hierarchy.
@propertyWrapper
public struct LiveQuery<Format: DatastoreFormat>: DynamicProperty {
    @Environment(\.folioPersistence) private var environmentPersistence
    /// Kept by SwiftUI from the first `init` on; each later `init` makes one it discards
    /// (cheap: its object starts no query until ``update()`` attaches it).
    @State private var storage: LiveQueryStorage<Format>
    private let datastore: LiveQueryStorage<Format>.Source?

    /// A live query over the datastore of `format` in the environment's
    /// `EnvironmentValues.folioPersistence`.
    ///
    /// ```swift
    /// @LiveQuery(BookFormat.self, sortBy: [SortDescriptor(\.title)]) private var books
    /// ```
    ///
    /// - Parameters:
    ///   - format: The datastore's format.
    ///   - predicate: Which instances to include; nil includes every instance.
    ///   - sortBy: The order of the results; ties, and no descriptors, in identifier order.
    ///   - limit: At most this many results, nil for all.
    public init(
        _ format: Format.Type, where predicate: Predicate<Format.Instance>? = nil,
        sortBy: [SortDescriptor<Format.Instance>] = [], limit: Int? = nil
    ) {
        _storage = State(
            initialValue: LiveQueryStorage(LiveResultsQuery(predicate: predicate, sortBy: sortBy, limit: limit)))
        datastore = nil
    }

    /// A live query over `datastore` (read-write or read-only), whatever the environment
    /// holds.
    ///
    /// ```swift
    /// init(helper: Persistence<ReadOnly>) {
    ///     _books = LiveQuery(helper.datastore(for: BookFormat.self), sortBy: [SortDescriptor(\.title)])
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - datastore: The datastore to query.
    ///   - predicate: Which instances to include; nil includes every instance.
    ///   - sortBy: The order of the results; ties, and no descriptors, in identifier order.
    ///   - limit: At most this many results, nil for all.
    public init<Access: AccessMode>(
        _ datastore: Datastore<Format, Access>, where predicate: Predicate<Format.Instance>? = nil,
        sortBy: [SortDescriptor<Format.Instance>] = [], limit: Int? = nil
    ) {
        _storage = State(
            initialValue: LiveQueryStorage(LiveResultsQuery(predicate: predicate, sortBy: sortBy, limit: limit)))
        self.datastore = .persistence(
            ObjectIdentifier(datastore.persistence), ObservableResults<Format>.liveQueryFactory(datastore))
    }

    /// The query's results, in order: empty until they first arrive.
    ///
    /// ```swift
    /// List(books, id: \.id) { Text($0.title) }
    /// ```
    public var wrappedValue: [Format.Instance] { storage.object.results }

    /// The ``ObservableResults`` behind the property: its phase and error, and the query
    /// to replace as the view's search text changes.
    ///
    /// ```swift
    /// .onChange(of: searchText) {
    ///     let text = searchText
    ///     $books.replaceQuery(where: #Predicate { $0.title.localizedStandardContains(text) })
    /// }
    /// ```
    public var projectedValue: ObservableResults<Format> { storage.object }

    /// Attaches the query to its datastore before SwiftUI renders the view; called by
    /// SwiftUI. The query starts at the first call, and again if the datastore changes.
    ///
    /// ```swift
    /// // SwiftUI calls it; nothing to call yourself.
    /// ```
    public func update() {
        if let datastore {
            storage.follow(datastore)
        } else if let persistence = environmentPersistence {
            storage.follow(
                .persistence(
                    ObjectIdentifier(persistence),
                    ObservableResults<Format>.liveQueryFactory(persistence.datastore(for: Format.self))))
        } else {
            storage.follow(.missing)
        }
    }
}

/// What a ``LiveQuery`` keeps across its view's re-creations: the object, and which
/// persistence it follows.
final class LiveQueryStorage<Format: DatastoreFormat>: Sendable {
    /// Where a LiveQuery's datastore comes from.
    enum Source {
        case persistence(ObjectIdentifier, ObservableResults<Format>.LiveQueryFactory)
        /// Neither given nor in the environment.
        case missing

        var persistenceID: ObjectIdentifier? {
            if case .persistence(let id, _) = self { return id }
            return nil
        }
    }

    let object: ObservableResults<Format>
    /// The persistence followed (`.some(nil)`: none was found); nil before the first update.
    private let followed = Mutex<ObjectIdentifier??>(nil)

    init(_ query: LiveResultsQuery<Format.Instance>) {
        object = ObservableResults(query: query, isolation: MainActor.shared)
    }

    /// Starts the query on `source`, unless it already follows that persistence.
    func follow(_ source: Source) {
        let id = source.persistenceID
        let isNew = followed.withLock { followed in
            guard followed != .some(id) else { return false }
            followed = .some(id)
            return true
        }
        guard isNew else { return }
        switch source {
        case .persistence(_, let makeLiveQuery):
            object.follow(makeLiveQuery)
        case .missing:
            object.follow { _ throws(FolioError) in
                throw .invalidArgument(
                    name: "folioPersistence",
                    reason: "the view's environment has no folioPersistence, and the LiveQuery was given no datastore")
            }
        }
    }
}
#endif
