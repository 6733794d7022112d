import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A ``BenchLRU`` behind one kind of lock: the `locks` suite's systems.
///
/// The classes other than ``MutexGuarded`` are `@unchecked Sendable`: their `lru` is only
/// read or written inside `read`/`write`, which hold the lock (exclusive for `write`), so
/// no two threads touch it at once. They keep it in an ``LRUBox`` rather than a stored
/// `var`: a class's `var` passed `inout` costs a dynamic exclusivity check (about 10 ns a
/// call here), which `Mutex` does not pay and which would be charged to the lock.
protocol GuardedLRU: AnyObject, Sendable {
    /// The system name in the report.
    static var name: String { get }
    init(_ lru: sending BenchLRU)
    /// Runs `body` on the LRU with the lock held exclusively (reads that move an entry to
    /// the front are writes).
    func write<R: Sendable>(_ body: @Sendable (inout BenchLRU) -> R) -> R
    /// Runs `body` on the LRU with the lock held shared where the lock has a shared mode
    /// (`pthread_rwlock_t`, a concurrent queue), exclusively otherwise.
    func read<R: Sendable>(_ body: @Sendable (borrowing BenchLRU) -> R) -> R
}

/// A ``BenchLRU`` in memory of its own, reached through a pointer (no exclusivity check).
final class LRUBox: @unchecked Sendable {
    let pointer = UnsafeMutablePointer<BenchLRU>.allocate(capacity: 1)
    init(_ lru: sending BenchLRU) { pointer.initialize(to: lru) }
    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}

/// No lock (one thread only): the cost of the critical section itself.
final class UnlockedLRU: GuardedLRU, @unchecked Sendable {
    static let name = "no-lock"
    private let box: LRUBox
    init(_ lru: sending BenchLRU) { box = LRUBox(lru) }
    func write<R: Sendable>(_ body: @Sendable (inout BenchLRU) -> R) -> R { body(&box.pointer.pointee) }
    func read<R: Sendable>(_ body: @Sendable (borrowing BenchLRU) -> R) -> R { body(box.pointer.pointee) }
}

/// `Synchronization.Mutex`, the state inside it (what Folio's cache uses).
final class MutexGuarded: GuardedLRU {
    static let name = "mutex"
    private let lru: Mutex<BenchLRU>
    init(_ lru: sending BenchLRU) { self.lru = Mutex(lru) }
    func write<R: Sendable>(_ body: @Sendable (inout BenchLRU) -> R) -> R { lru.withLock { body(&$0) } }
    func read<R: Sendable>(_ body: @Sendable (borrowing BenchLRU) -> R) -> R { lru.withLock { body($0) } }
}

/// Foundation's `NSLock` (a pthread mutex in an object).
final class NSLockGuarded: GuardedLRU, @unchecked Sendable {
    static let name = "nslock"
    private let lock = NSLock()
    private let box: LRUBox
    init(_ lru: sending BenchLRU) { box = LRUBox(lru) }
    func write<R: Sendable>(_ body: @Sendable (inout BenchLRU) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&box.pointer.pointee)
    }
    func read<R: Sendable>(_ body: @Sendable (borrowing BenchLRU) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(box.pointer.pointee)
    }
}

/// A default `pthread_mutex_t`, heap-allocated (a pthread mutex must not move).
final class PthreadMutexGuarded: GuardedLRU, @unchecked Sendable {
    static let name = "pthread-mutex"
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let box: LRUBox
    init(_ lru: sending BenchLRU) {
        box = LRUBox(lru)
        pthread_mutex_init(mutex, nil)
    }
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    func write<R: Sendable>(_ body: @Sendable (inout BenchLRU) -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(&box.pointer.pointee)
    }
    func read<R: Sendable>(_ body: @Sendable (borrowing BenchLRU) -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(box.pointer.pointee)
    }
}

/// `DispatchSemaphore(value: 1)` used as a lock (YYCache's choice once).
final class SemaphoreGuarded: GuardedLRU, @unchecked Sendable {
    static let name = "semaphore"
    private let semaphore = DispatchSemaphore(value: 1)
    private let box: LRUBox
    init(_ lru: sending BenchLRU) { box = LRUBox(lru) }
    func write<R: Sendable>(_ body: @Sendable (inout BenchLRU) -> R) -> R {
        semaphore.wait()
        defer { semaphore.signal() }
        return body(&box.pointer.pointee)
    }
    func read<R: Sendable>(_ body: @Sendable (borrowing BenchLRU) -> R) -> R {
        semaphore.wait()
        defer { semaphore.signal() }
        return body(box.pointer.pointee)
    }
}

/// A concurrent `DispatchQueue`: writes `sync(flags: .barrier)`, reads plain `sync`
/// (TMMemoryCache's scheme with synchronous calls).
final class QueueGuarded: GuardedLRU, @unchecked Sendable {
    static let name = "queue-barrier"
    private let queue = DispatchQueue(label: "folio-bench.locks", attributes: .concurrent)
    private let box: LRUBox
    init(_ lru: sending BenchLRU) { box = LRUBox(lru) }
    func write<R: Sendable>(_ body: @Sendable (inout BenchLRU) -> R) -> R {
        queue.sync(flags: .barrier) { body(&box.pointer.pointee) }
    }
    func read<R: Sendable>(_ body: @Sendable (borrowing BenchLRU) -> R) -> R {
        queue.sync { body(box.pointer.pointee) }
    }
}

/// A default `pthread_rwlock_t`, heap-allocated: writes take it exclusively, reads shared.
final class RWLockGuarded: GuardedLRU, @unchecked Sendable {
    static let name = "rwlock"
    private let rwlock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
    private let box: LRUBox
    init(_ lru: sending BenchLRU) {
        box = LRUBox(lru)
        pthread_rwlock_init(rwlock, nil)
    }
    deinit {
        pthread_rwlock_destroy(rwlock)
        rwlock.deallocate()
    }
    func write<R: Sendable>(_ body: @Sendable (inout BenchLRU) -> R) -> R {
        pthread_rwlock_wrlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        return body(&box.pointer.pointee)
    }
    func read<R: Sendable>(_ body: @Sendable (borrowing BenchLRU) -> R) -> R {
        pthread_rwlock_rdlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        return body(box.pointer.pointee)
    }
}
