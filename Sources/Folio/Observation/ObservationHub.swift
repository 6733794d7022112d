import Dispatch
import Synchronization
import FolioStorage

/// An observer the hub drives: one datastore's events, one instance, a live query, or one
/// key of the key-value store.
protocol HubObserver: AnyObject, Sendable {
    /// The tree whose changes the observer is given: a datastore's records tree, or the
    /// key-value store's tree.
    var observedTree: String { get }
    /// Starts the observer at the hub's current state (`view` is the generation the hub
    /// last processed), replaying history first if it resumes from an older token.
    func start(at view: ReadView, hub: ObservationHub)
    /// Applies one commit that changed the observed datastore's records.
    func apply(_ commit: CommitDelta)
    /// History was lost between two generations, or a commit changed the observed tree
    /// wholesale (too many keys to list): reload from `view`.
    func reload(at view: ReadView)
}

/// Turns a persistence's store events into datastore events, on one serial queue: commits
/// are processed in commit order, after they are durable (the engine delivers them then),
/// and never on the committing thread's critical path.
final class ObservationHub: Sendable {
    private let store: Store
    /// The hub's serial queue (internal: tests hold it to order events deterministically).
    let queue = DispatchQueue(label: "folio.observation")
    private struct State {
        var observers: [ObjectIdentifier: any HubObserver] = [:]
        /// Observers added whose start is still queued. `remove` takes them out of here too,
        /// so a removal wins whichever runs first (the queued start then does nothing).
        var pending: Set<ObjectIdentifier> = []
        var subscription: StoreObservation?
        /// The generation the hub has processed, as a view (queue-confined use).
        var view: ReadView?
    }
    private let state = Mutex(State())
    /// Test seam: runs inside ``subscribe()`` between observing the store and reading it, so
    /// a test can commit exactly there.
    let betweenSubscribeSteps = Mutex<(@Sendable () -> Void)?>(nil)

    /// Observers registered (tests check that dropped sequences leave none behind).
    var observerCount: Int { state.withLock { $0.observers.count + $0.pending.count } }

    init(store: Store) {
        self.store = store
    }

    /// Registers `observer`. It joins on the hub's queue, after every event already queued,
    /// and starts at the generation the hub has processed: it sees each later commit once.
    func add(_ observer: any HubObserver) {
        if state.withLock({ $0.subscription == nil }) { subscribe() }
        let id = ObjectIdentifier(observer)
        state.withLock { _ = $0.pending.insert(id) }
        queue.async { [self] in
            // Invariant: an observer is registered only if it was not removed meanwhile (the
            // queued block holds the observer, so its identifier cannot be reused by then).
            let view = state.withLock { state -> ReadView? in
                guard state.pending.remove(id) != nil, let view = state.view else { return nil }
                state.observers[id] = observer
                return view
            }
            guard let view else { return }
            observer.start(at: view, hub: self)
        }
    }

    /// Unregisters `observer`, whether or not its queued start has run yet.
    func remove(_ observer: any HubObserver) {
        let id = ObjectIdentifier(observer)
        state.withLock { state in
            state.pending.remove(id)
            state.observers.removeValue(forKey: id)
        }
    }

    /// Replays the commits after `token` up to `view` to `body` in bounded batches, for an
    /// observer resuming from a token; false if they could not all be replayed (history
    /// gone, longer than the store's replay bound, or unreadable part-way).
    func replayHistory(
        after token: ObservationToken, upTo view: ReadView, _ body: ([CommitNotification]) -> Void
    ) -> Bool {
        do {
            try store.replayCommits(after: token.generation, upTo: view, body)
            return true
        } catch {
            return false
        }
    }

    private func subscribe() {
        // Observe first, then read: a commit between the two is then both in the starting
        // view and queued as an event, and `process` skips it as already applied. (Reading
        // first would lose it: neither in the view nor delivered.)
        let subscription = store.observe { [weak self] event in
            guard let self else { return }
            self.queue.async { self.process(event) }
        }
        betweenSubscribeSteps.withLock { $0 }?()
        // The hub starts at the store's generation now; later events move it on.
        let initial = try? store.read()
        let duplicate = state.withLock { state -> Bool in
            if state.subscription != nil { return true }
            state.subscription = subscription
            if state.view == nil { state.view = initial }
            return false
        }
        if duplicate { subscription.cancel() }
    }

    private func process(_ event: StoreEvent) {
        let observers = state.withLock { Array($0.observers.values) }
        switch event {
        case .committed(let commits):
            let byTree = Dictionary(grouping: observers, by: \.observedTree)
            for commit in commits {
                // The hub's starting view may already include a commit whose event was
                // queued while it subscribed: never apply a commit twice.
                if let seen = state.withLock({ $0.view?.generation }), commit.generation <= seen { continue }
                let token = ObservationToken(generation: commit.generation)
                for (tree, group) in byTree {
                    // Too many changes to list: every observer of the tree re-reads it.
                    if commit.changes.isChangedWholesale(tree) {
                        guard let view = commit.after ?? (try? store.read()) else { continue }
                        for observer in group { observer.reload(at: view) }
                        continue
                    }
                    let entries = commit.changes.changes(in: tree)
                    guard !entries.isEmpty else { continue }
                    let delta = CommitDelta(
                        tree: tree, token: token, before: commit.before, after: commit.after, entries: entries)
                    for observer in group { observer.apply(delta) }
                }
                if let after = commit.after { state.withLock { $0.view = after } }
            }
        case .historyUnavailable:
            guard let view = try? store.read() else { return }
            state.withLock { $0.view = view }
            for observer in observers { observer.reload(at: view) }
        }
    }
}
