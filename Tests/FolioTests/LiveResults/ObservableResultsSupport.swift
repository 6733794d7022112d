import Dispatch
import Foundation
import Observation
import Synchronization
import FolioTestSupport
@testable import Folio

/// Waits, on `isolation` (the actor the object changes on), until `condition` holds,
/// checking again after each change the object announces. Event-driven: the check and the
/// re-registration run on that actor with no suspension between them, and every change
/// happens on that actor too, so no change can slip between them. Test time limits guard
/// against hangs.
func waitUntil<Format: DatastoreFormat>(
    _ object: ObservableResults<Format>, isolation: isolated (any Actor) = #isolation,
    _ condition: @Sendable (ObservableResults<Format>) -> Bool
) async {
    while !condition(object) {
        await withCheckedContinuation { (changed: CheckedContinuation<Void, Never>) in
            withObservationTracking {
                _ = object.results
                _ = object.phase
            } onChange: {
                changed.resume()
            }
        }
    }
}

/// Counts the change notices of an object's `results` (one per result array the live
/// query delivers), and how many came off the actor they should come on. Re-registers
/// after each notice, holding the object weakly (a tracked object must still be free to go).
final class ResultNotices<Format: DatastoreFormat>: Sendable {
    private let counts = Mutex((all: 0, offActor: 0))
    private let isOnExpectedActor: @Sendable () -> Bool

    /// `isOnExpectedActor` tells, inside an `onChange`, whether it runs on the right actor.
    init(_ object: ObservableResults<Format>, isOnExpectedActor: @escaping @Sendable () -> Bool) {
        self.isOnExpectedActor = isOnExpectedActor
        track(WeakReference(object))
    }

    var all: Int { counts.withLock { $0.all } }
    var offActor: Int { counts.withLock { $0.offActor } }

    private func track(_ object: WeakReference<ObservableResults<Format>>) {
        guard let tracked = object.object else { return }
        withObservationTracking {
            _ = tracked.results
        } onChange: { [self] in
            let onActor = isOnExpectedActor()
            counts.withLock {
                $0.all += 1
                if !onActor { $0.offActor += 1 }
            }
            track(object)
        }
    }
}

/// An executor on a dispatch queue that can tell, without trapping, whether the code
/// calling it runs on it (`assertIsolated` would end the whole test process instead).
final class MarkedQueueExecutor: SerialExecutor {
    private let queue = DispatchQueue(label: "folio.test.worker")
    private let key = DispatchSpecificKey<Bool>()

    init() {
        queue.setSpecific(key: key, value: true)
    }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

/// A user's actor, other than the main actor, that an ``ObservableResults`` can deliver on.
actor Worker {
    let executor = MarkedQueueExecutor()

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Keeps the actor busy until `gate` is signalled, calling `entered` once it is.
    func hold(until gate: DispatchSemaphore, entered: @Sendable () -> Void) {
        entered()
        gate.wait()
    }
}

/// Whether the hub comes to `count` observers. A subscription ends when a cancelled task's
/// iteration does, with no event to wait for, so this polls (under the shared hang guard).
func observerCount(of hub: ObservationHub, becomes count: Int) async -> Bool {
    await eventually { hub.observerCount == count }
}

/// Whether the caller runs on the main actor, without trapping. Main-actor jobs run on the
/// main dispatch queue, which this marks once. (`Thread.isMainThread` will not do: on Linux
/// the main queue is drained by another thread once the test runner parks the main one.)
enum MainActorCheck {
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}
