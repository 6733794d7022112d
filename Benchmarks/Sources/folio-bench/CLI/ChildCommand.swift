import FolioStorage

/// The hidden `folio-bench __child ...` commands: work that must start in a fresh process,
/// timed by the child itself (see ``ChildProcess``).
///
/// - `__child engine-open --dir D --key-index I --durability full|grouped`:
///   `Store.open` the engine store in D and get key I.
/// - `__child crud-open --system NAME --dir D --id ID --durability full|grouped`: open the
///   crud store of system NAME in D and load record ID.
/// - `__child mp-update|mp-idle|mp-first-write --system NAME --dir D --n N --first ID
///   --count K --label L --durability full|grouped [--busy-timeout S]`: the `mp` suite's processes (see
///   ``MultiProcessChild``), which talk with the parent line by line (``LineChild``).
/// - `__child replicate-follow --source S --dest D --durability full|grouped`: the
///   `replication` suite's replicator process (``ReplicationChild``).
enum ChildCommand {
    static func run(_ arguments: [String]) async throws {
        guard let kind = arguments.first else { throw ArgumentError("__child needs a command") }
        var values: [String: String] = [:]
        var rest = arguments.dropFirst()
        while let flag = rest.popFirst() {
            guard flag.hasPrefix("--"), let value = rest.popFirst() else {
                throw ArgumentError("__child: bad argument \(flag)")
            }
            values[String(flag.dropFirst(2))] = value
        }
        func value(_ name: String) throws -> String {
            guard let value = values[name] else { throw ArgumentError("__child \(kind): missing --\(name)") }
            return value
        }
        guard let durability = BenchDurability(rawValue: try value("durability")) else {
            throw ArgumentError("__child: bad durability")
        }
        switch kind {
        case "engine-open":
            let directory = try value("dir")
            guard let index = Int(try value("key-index")) else { throw ArgumentError("__child: bad --key-index") }
            var store: Store?
            try await ChildProcess.report {
                let opened = try Store.open(at: directory, options: StoreOptions(durability: durability.engine))
                store = opened
                guard let value = try opened.read().get(EngineData.key(index), in: EngineData.tree) else {
                    throw BenchError.wrongResult("key \(index) not found")
                }
                return value.reduce(0) { $0 &+ Int($1) }
            }
            store?.close()
        case "crud-open":
            guard let system = CrudSystems.type(named: try value("system")) else {
                throw ArgumentError("__child: unknown system")
            }
            let directory = try value("dir")
            guard let id = Int64(try value("id")) else { throw ArgumentError("__child: bad --id") }
            var store: (any CrudSystem)?
            try await ChildProcess.report {
                let opened = try await system.open(directory: directory, durability: durability)
                store = opened
                guard let record = try await opened.fetch(id: id) else {
                    throw BenchError.wrongResult("record \(id) not found")
                }
                return record.priority
            }
            try await store?.close()
        case "mp-update", "mp-idle", "mp-first-write":
            guard let system = CrudSystems.type(named: try value("system")) else {
                throw ArgumentError("__child: unknown system")
            }
            guard let n = Int(try value("n")), let first = Int64(try value("first")),
                let count = Int(try value("count")),
                count >= 1
            else { throw ArgumentError("__child \(kind): bad --n, --first or --count") }
            var busyTimeout: Double?
            if let text = values["busy-timeout"] {
                guard let seconds = Double(text) else { throw ArgumentError("__child \(kind): bad --busy-timeout") }
                busyTimeout = seconds
            }
            try await MultiProcessChild.run(
                kind, system: system, directory: try value("dir"), n: n, first: first, count: count,
                label: try value("label"), durability: durability, busyTimeout: busyTimeout)
        case ReplicationChild.command:
            try await ReplicationChild.run(source: try value("source"), destination: try value("dest"))
        default:
            throw ArgumentError("__child: unknown command \(kind)")
        }
    }
}
