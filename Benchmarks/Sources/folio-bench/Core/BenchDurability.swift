import FolioStorage

/// The `--durability` flag: how durable each commit is, for every system in a run.
///
/// - `full`: a returned commit survives a crash. Folio: ``Durability/full``; GRDB: WAL with
///   `PRAGMA synchronous = FULL` (the WAL is fsynced at every commit).
/// - `grouped`: a crash may lose the last commits, never corrupt the store. Folio:
///   ``Durability/grouped`` (10 ms window); GRDB: WAL with `PRAGMA synchronous = NORMAL`
///   (the WAL is fsynced only at checkpoints).
enum BenchDurability: String, Sendable, CaseIterable, Codable {
    case full
    case grouped

    /// The engine's setting for this flag.
    var engine: Durability {
        switch self {
        case .full: return .full
        case .grouped: return .grouped
        }
    }

    /// The value of SQLite's `PRAGMA synchronous` for this flag (and the number SQLite
    /// reports back for it).
    var sqliteSynchronous: (name: String, value: Int) {
        switch self {
        case .full: return ("FULL", 2)
        case .grouped: return ("NORMAL", 1)
        }
    }
}

/// What a result row says about durability: the flag, or a fixed value for rows the flag
/// does not change (the JSON floors touch no store; the commit floors always sync).
enum RowDurability: Sendable, Equatable {
    case flag(BenchDurability)
    /// Always fully durable, whatever the flag (the commit floors).
    case alwaysFull
    /// No store is involved (json-*-floor).
    case notApplicable
    /// A system outside the flag, whose persistence is described by `label` (UserDefaults in
    /// the kv suite: `plist`, a whole-file rewrite).
    case fixed(String)

    var label: String {
        switch self {
        case .flag(let d): return d.rawValue
        case .alwaysFull: return "full"
        case .notApplicable: return "none"
        case .fixed(let label): return label
        }
    }
}
