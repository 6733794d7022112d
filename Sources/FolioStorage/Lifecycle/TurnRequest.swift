import Synchronization

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A waiting writer's request for the store's lock, which a process about to take the lock
/// again yields to (Docs/Durability.md §1.6, "Fairness"): the store's `turns` file, mapped
/// shared by every writer, holds one u64, the `CLOCK_MONOTONIC` instant in nanoseconds
/// until which some process asks for the lock, or 0 (Docs/Format.md §2).
///
/// Why it is needed: `flock` does not queue. A process that commits in a loop frees the lock
/// for some microseconds between its turns and takes it again, and a waiter gets in only if
/// one of its tries lands in such a gap, so its wait was bounded by its busy timeout alone.
/// A waiter that has waited ``askAfter`` asks; a process that is about to take the lock,
/// and has no waiter asking itself, lets that try fail instead, so the asker's next try
/// (at most ``askingPause`` later) finds the lock free. It yields only once it has held the
/// lock for ``askAfter`` (its turns following each other closely): with several waiters, each
/// asking all along, yielding at every turn would pass the lock at every commit, each
/// passing costing the taker a catch-up and leaving the lock free until the asker's try.
/// So turns pass between busy processes about every ``askAfter``.
///
/// Why it cannot do harm: it is a hint; the lock alone decides who writes. A request lapses
/// ``lifetime`` after its last renewal (a waiter renews it at each try), so one of a process
/// that was killed or suspended holds nobody up for longer. The u64 is loaded and stored
/// without atomicity across processes (it is aligned, so the hardware does not tear it,
/// but nothing promises it): a value further ahead than ``lifetime`` is taken for none, so
/// no reading can make a writer yield for longer than that. A cleared request of another
/// waiter (a withdrawal clears whatever is there) is renewed at that waiter's next try.
final class TurnRequest: Sendable {
    /// A waiter asks once it has waited this long. Each passing of the lock leaves it free
    /// until the asker's next try (half of ``askingPause`` on average) and costs the taker a
    /// catch-up, so turns pass at most about this often between busy processes: 50 ms keeps
    /// that under 1 % of their time, and bounds a wait at about 50 ms plus a turn.
    static let askAfter: Duration = .milliseconds(50)
    /// How long a request holds unless renewed.
    static let lifetime: Duration = .milliseconds(20)
    /// While it asks, a waiter tries at least this often.
    static let askingPause: Duration = .microseconds(500)
    /// The bytes of the `turns` file this build uses (the file may be longer).
    static let fileLength = 8

    private let mapping: SharedMapping
    /// This process's side: when its lock was last released, and when its current streak of
    /// turns began (a turn that began within ``streakGap`` of the last release continues it).
    private let lastRelease = Atomic<UInt64>(0)
    private let streakStart = Atomic<UInt64>(0)
    /// The longest gap between two turns of one streak: a process committing in a loop takes
    /// the lock again some microseconds after releasing it.
    static let streakGap: Duration = .milliseconds(1)
    /// How long a process that yielded pauses before its next try: past ``streakGap``, so
    /// that try does not yield again (its streak has ended), and long enough for the asker,
    /// which tries every ``askingPause``, to take the lock first.
    static let yieldPause: Duration = .microseconds(1_500)

    /// The `turns` file at `path`, mapped (created if missing); nil where the file system
    /// cannot map files or the file cannot be made.
    init?(path: String, fileSystem: any FileSystem) {
        guard let mapper = fileSystem as? any SharedMappingFileSystem,
            let mapping = mapper.mapSharedWritable(path, length: Self.fileLength)
        else { return nil }
        self.mapping = mapping
    }

    /// Asks for the lock, or renews this process's request, for ``lifetime`` from now.
    func ask() {
        mapping.store(UInt64(Self.now() + Self.nanoseconds(Self.lifetime)).littleEndian, at: 0)
    }

    /// Withdraws the request there is (this process's or another's, which renews it).
    func withdraw() {
        mapping.store(UInt64(0), at: 0)
    }

    /// Whether some process asks for the lock now.
    var isAsked: Bool {
        let until = UInt64(littleEndian: mapping.load(at: 0, as: UInt64.self))
        let now = Self.now()
        return until > now && until - now <= Self.nanoseconds(Self.lifetime)
    }

    /// Whether this process, about to take the lock, yields it to a request instead: some
    /// other process asks (no waiter of this process does: `asking` is false), and this
    /// process's streak of turns has lasted ``askAfter``.
    func yields(asking: Bool) -> Bool {
        guard !asking, isAsked else { return false }
        let now = Self.now()
        let last = lastRelease.load(ordering: .relaxed)
        // A turn after a pause begins a new streak: it does not yield.
        guard now - min(now, last) <= Self.nanoseconds(Self.streakGap) else { return false }
        return now - min(now, streakStart.load(ordering: .relaxed)) >= Self.nanoseconds(Self.askAfter)
    }

    /// Records that this process took the lock: a new streak unless the lock was released
    /// within ``streakGap``.
    func noteAcquired() {
        let now = Self.now()
        if now - min(now, lastRelease.load(ordering: .relaxed)) > Self.nanoseconds(Self.streakGap) {
            streakStart.store(now, ordering: .relaxed)
        }
    }

    /// Records that this process released the lock.
    func noteReleased() {
        lastRelease.store(Self.now(), ordering: .relaxed)
    }

    /// `CLOCK_MONOTONIC` in nanoseconds: one clock for every process of the machine.
    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        UInt64(duration.components.seconds) * 1_000_000_000 + UInt64(duration.components.attoseconds / 1_000_000_000)
    }
}
