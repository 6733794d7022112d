/// How much history a read-only store replays to its observers at once.
///
/// A follower that slept through many commits replays them in `.committed` events of at most
/// `batch` commits, so the change records and views held at once are one batch's, not the
/// whole history's. Longer histories than `limit` commits are not replayed at all: observers
/// get `historyUnavailable` and reload (cheaper than replaying that many commits, and it
/// bounds what the observers' queues can hold: events are queued faster than observers may
/// consume them). Finding the chain costs a commit location per commit (24 bytes), read
/// back along the commit pages in blocks (`CommitPageWindow`); the oldest commits it decodes,
/// within `rememberedBytes` of commit pages, are kept for the replay's second pass.
struct ReplayBounds: Sendable {
    /// Commits per replayed event.
    var batch = 256
    /// The longest history replayed; past it, observers reload.
    var limit = 4096
    /// Commit pages kept decoded between the replay's passes, in bytes: some three thousand
    /// commits of a few changed keys each, so that most replays read each page once. A
    /// commit that changed many keys has a page as large, and its decoded record some times
    /// larger.
    var rememberedBytes = 1 << 20
}
