/// Events waiting for observers, and whether a thread is handing them out.
///
/// Ordered and lossless delivery without calling observers under a lock: each event is
/// queued under the lock that fixes its place in generation order (`rootFileLock` for a
/// commit or a grouped flush, the follower's lock for a reader), and the one thread that
/// finds no delivery running becomes the deliverer and drains the queue, batch after
/// batch, with no lock held while a handler runs. A handler may therefore read, write,
/// commit, flush or close the store: what its own commit queues is delivered by the same
/// loop after the handler returns.
struct DeliveryQueue: Sendable {
    var events: [StoreEvent] = []
    var delivering = false
    /// The newest generation handed to observers (or the generation the store opened at).
    var delivered: UInt64

    init(delivered: UInt64) { self.delivered = delivered }
}

extension Store {
    /// The newest generation whose commit has been handed to this store's observers: a
    /// durable generation (grouped commits are delivered when flushed). An observer that
    /// lost events resumes after it (``commits(after:)``).
    public var deliveredGeneration: UInt64 {
        deliveries.withLock { $0.delivered }
    }

    /// Queues `event` for observers. Call it under the lock that orders the event.
    func enqueue(_ event: StoreEvent) {
        if case .committed(let list) = event, list.isEmpty { return }
        deliveries.withLock { $0.events.append(event) }
    }

    /// Hands queued events to observers, in order, unless another thread is already doing
    /// it (that thread then delivers them). Never call this with a store lock held.
    func deliverQueued() {
        let claimed = deliveries.withLock { queue -> Bool in
            if queue.delivering || queue.events.isEmpty { return false }
            queue.delivering = true
            return true
        }
        guard claimed else { return }
        while true {
            let events = deliveries.withLock { queue -> [StoreEvent] in
                defer { queue.events = [] }
                if queue.events.isEmpty { queue.delivering = false }
                return queue.events
            }
            if events.isEmpty { return }
            let handlers = observers.withLock { Array($0.handlers.values) }
            for event in events {
                for handler in handlers { handler(event) }
                let generation: UInt64?
                switch event {
                case .committed(let list): generation = list.last?.generation
                case .historyUnavailable(_, let to): generation = to
                }
                if let generation { deliveries.withLock { $0.delivered = generation } }
            }
        }
    }
}
