import FolioStorage

/// What ``UndoConnection`` needs of an app's undo manager: Foundation's `UndoManager` on
/// Apple platforms conforms, and so can any other (a test's, a command line's).
///
/// The rule is Foundation's: an undo registered while an undo handler runs is the redo of
/// what that handler undid, and one registered while a redo handler runs is undoable again.
@MainActor public protocol UndoRegistrar: AnyObject {
    /// Registers `handler` to run when the user undoes (or redoes) the action named `name`.
    func registerUndo(named name: String?, handler: @escaping @MainActor () -> Void)
}

/// Connects a persistence's ``Persistence/undo(_:forcing:)`` and ``Persistence/redo(_:forcing:)`` to an app's
/// undo manager, so that its Edit menu undoes and redoes named actions.
///
/// ```swift
/// let undo = UndoConnection(persistence: persistence, registrar: undoManager)
/// try await undo.perform(named: "Add “Dune”") { try await books.persist(dune) }
/// // Edit > Undo Add “Dune” now reverts it in the store; Edit > Redo re-applies it.
/// ```
///
/// The undo manager's handlers are synchronous, the store's undo is not: each handler
/// registers its inverse at once (as the undo manager expects) and queues the store's undo
/// or redo, which run one after another in the order the user chose them. An error (a
/// conflict with a later transaction, ``FolioError/undoConflict(generation:changedSince:)``)
/// goes to `onError`; the menu has already moved on, so show it and, if needed, reload.
@MainActor public final class UndoConnection {
    /// The persistence whose actions are undone.
    public let persistence: Persistence<ReadWrite>
    /// Which transactions are actions (``UndoScope``).
    public let scope: UndoScope
    private let registrar: any UndoRegistrar
    private let onError: @MainActor (any Error) -> Void
    /// The store's undos and redos the menu asked for, run in order.
    private var queue: Task<Void, Never>?

    /// Connects `persistence` to `registrar` (an `UndoManager`); `onError` receives the
    /// errors of undos and redos that the menu started.
    public init(
        persistence: Persistence<ReadWrite>, scope: UndoScope = .namedActions, registrar: any UndoRegistrar,
        onError: @escaping @MainActor (any Error) -> Void = { _ in }
    ) {
        self.persistence = persistence
        self.scope = scope
        self.registrar = registrar
        self.onError = onError
    }

    /// Runs `body` as ``Persistence/perform(named:_:)`` and registers its undo under `name`.
    @discardableResult
    public func perform<Result: Sendable>(
        named name: String, _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        await settled()
        let result = try await persistence.perform(named: name, body)
        actionPerformed(named: name)
        return result
    }

    /// Registers the undo of an action the app performed itself (with
    /// ``Persistence/perform(named:_:)``), named `name`.
    public func actionPerformed(named name: String?) {
        registrar.registerUndo(named: name) { [weak self] in self?.undoRequested(name) }
    }

    /// Returns once every undo and redo the menu asked for has run.
    public func settled() async {
        await queue?.value
    }

    private func undoRequested(_ name: String?) {
        registrar.registerUndo(named: name) { [weak self] in self?.redoRequested(name) }
        run { [persistence, scope] in try await persistence.undo(scope) }
    }

    private func redoRequested(_ name: String?) {
        registrar.registerUndo(named: name) { [weak self] in self?.undoRequested(name) }
        run { [persistence, scope] in try await persistence.redo(scope) }
    }

    /// Runs `operation` after the ones queued before it.
    private func run(_ operation: @escaping @MainActor () async throws -> HistoryAction?) {
        let previous = queue
        queue = Task { @MainActor [onError] in
            await previous?.value
            do {
                _ = try await operation()
            } catch {
                onError(error)
            }
        }
    }
}
