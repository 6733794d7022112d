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
/// (at most ``askingPause`` later) finds the lock free. One asker at a time tries that
/// often: a waiter that finds another waiter's request live (not the one it stored last)
/// leaves it be and tries at the usual pace, since the holder yields to whoever's request
/// is stored, and several processes each trying every ``askingPause`` cost the machine's
/// cores more than the passing gains. It yields only once it has held the
/// lock for ``askAfter`` (its turns following each other closely): with several waiters, each
/// asking all along, yielding at every turn would pass the lock at every commit, each
/// passing costing the taker a catch-up and leaving the lock free until the asker's try.
/// So turns pass between busy processes about every ``askAfter``.
///
/// A process yields only if its busy timeout is at least ``shortestYieldingTimeout`` (a
/// `Persistence`'s is 5 s by default; a bare `Store`'s is zero): after a yield it must wait
/// for its turn back, and a yielded try is not counted against that wait.
///
/// Why it cannot do harm: it is a hint; the lock alone decides who writes. A request lapses
/// ``lifetime`` after its last renewal (a waiter renews it at each try), so one of a process
/// that was killed or suspended holds nobody up for longer. The u64 is loaded and stored
/// without atomicity across processes (it is aligned, so the hardware does not tear it,
/// but nothing promises it): a value further ahead than ``lifetime`` is taken for none, so
/// no reading can make a writer yield for longer than that. A cleared request of another
/// waiter (a withdrawal clears whatever is there) is renewed at that waiter's next try. Two
/// threads of one process may store at once (a renewal and a withdrawal): as between
/// processes, either value is a valid hint.
///
/// The mapping faults (`SIGBUS`) if another program truncates the file while it is mapped,
/// as for the root file's mapping (`SharedMapping`); Folio never shortens it.
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
    /// The shortest busy timeout of a process that yields: after a yield it waits for the
    /// asker's turn (up to the asker's own streak, then asks in its turn), so a caller that
    /// waits less would fail where the lock alone would have let it write.
    static let shortestYieldingTimeout: Duration = .seconds(1)

    /// The `turns` file at `path`, mapped (created if missing); nil where the file system
    /// cannot map files or the file cannot be made.
    init?(path: String, fileSystem: any FileSystem) {
        guard let mapper = fileSystem as? any SharedMappingFileSystem,
            let mapping = mapper.mapSharedWritable(path, length: Self.fileLength)
        else { return nil }
        self.mapping = mapping
    }

    /// Asks for the lock, or renews this process's request, for ``lifetime`` from `now`;
    /// returns the deadline stored.
    @discardableResult
    func ask(at now: UInt64 = TurnRequest.now()) -> UInt64 {
        let until = now + Self.nanoseconds(Self.lifetime)
        mapping.store(until.littleEndian, at: 0)
        return until
    }

    /// Withdraws the request there is (this process's or another's, which renews it).
    func withdraw() {
        mapping.store(UInt64(0), at: 0)
    }

    /// Whether some process asks for the lock at `now`.
    func isAsked(now: UInt64 = TurnRequest.now()) -> Bool {
        liveRequest(now: now) != nil
    }

    /// The deadline of the request that holds at `now`, if one does.
    func liveRequest(now: UInt64 = TurnRequest.now()) -> UInt64? {
        let until = UInt64(littleEndian: mapping.load(at: 0, as: UInt64.self))
        return until > now && until - now <= Self.nanoseconds(Self.lifetime) ? until : nil
    }

    /// Whether this process, about to take the lock at `now`, yields it to a request
    /// instead: its streak of turns has lasted ``askAfter``, no waiter of this process asks
    /// (`asking` is false), and another process does. The request is looked at last, so
    /// a process that writes now and then never reads the mapping.
    func yields(asking: Bool, now: UInt64 = TurnRequest.now()) -> Bool {
        guard !asking else { return false }
        let start = streakStart.load(ordering: .relaxed)
        // No streak yet (nothing taken since the open), or a turn after a pause, which
        // begins a new one: no yield.
        guard start != 0, now - min(now, lastRelease.load(ordering: .relaxed)) <= Self.nanoseconds(Self.streakGap)
        else { return false }
        return now - min(now, start) >= Self.nanoseconds(Self.askAfter) && isAsked(now: now)
    }

    /// Records that this process took the lock at `now`: a new streak unless the lock was
    /// released within ``streakGap`` during one.
    func noteAcquired(at now: UInt64 = TurnRequest.now()) {
        let start = streakStart.load(ordering: .relaxed)
        if start == 0 || now - min(now, lastRelease.load(ordering: .relaxed)) > Self.nanoseconds(Self.streakGap) {
            streakStart.store(now, ordering: .relaxed)
        }
    }

    /// Records that this process released the lock at `now`.
    func noteReleased(at now: UInt64 = TurnRequest.now()) {
        lastRelease.store(now, ordering: .relaxed)
    }

    /// `CLOCK_MONOTONIC` in nanoseconds: one clock for every process of the machine.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        UInt64(duration.components.seconds) * 1_000_000_000 + UInt64(duration.components.attoseconds / 1_000_000_000)
    }
}
