@_spi(Engine) import Folio
import FolioStorage

/// `folio info STORE`: what a store holds and how much room it takes.
enum InfoCommand: Command {
    static let name = "info"
    static let summary = "describe a store: format, generation, space, files, datastores, indexes, key-value store"
    static let positionals = [PositionalSpec("STORE", help: "the store's directory")]
    static let options: [OptionSpec] = []
    static let showsProgress = false
    static let details = [
        """
        Opens the store read-only (no lock: safe beside a writer in another process) and \
        prints its format version, creation time, generation and commit time, live and dead \
        bytes, its files, and for every datastore: its types, record count, the versions its \
        records are stored in, and each declared index with its kind, storage, value type, \
        key path, whether it is built, and its entry count. Last, the key-value store \
        (persistence.values, the tree folio/values): its number of keys, the bytes of its keys \
        and values as stored, and the bytes of the pages that hold them; or "key-value store: \
        no values".
        """
    ]
    static let examples = ["folio info ~/Library.folio"]

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let path = arguments.positionals[0]
        let store = try StoreAccess.openForReading(path)
        defer { store.close() }
        let description = try store.describe()
        let statistics = try store.statistics()
        let view = try store.read()
        let inspector = StoreInspector(store: store)
        let datastores = try inspector.datastores()
        let out = OutputStream.standardOutput

        out.line("store \(path)")
        var rows: [[String]] = [
            [
                "format version",
                description.rootFormatVersion == description.formatVersion
                    ? "\(description.formatVersion) (this folio reads versions up to \(StorageFormat.version))"
                    : "\(description.rootFormatVersion), created as \(description.formatVersion) "
                        + "(this folio reads versions up to \(StorageFormat.version))",
            ],
            ["created", description.created.isEmpty ? "(not recorded)" : description.created],
            [
                "generation",
                "\(statistics.generation), committed \(Format.timestamp(microseconds: view.commitTimestamp))",
            ],
            ["live", Format.exactBytes(statistics.liveBytes)],
            [
                "dead",
                "\(Format.exactBytes(statistics.deadBytes)), "
                    + "\(Format.percent(statistics.deadBytes, of: statistics.currentFileBytes)) of the current snapshot file",
            ],
            ["trees", Format.count(statistics.treeCount)],
            [
                "files",
                "\(description.files.count), \(Format.bytes(description.files.reduce(0) { $0 + $1.bytes })) in all",
            ],
        ]
        out.write(Format.table(rows, indent: "  ").joined(separator: "\n") + "\n")
        let files = description.files.map { file -> [String] in
            var note = ""
            if file.name == description.currentSnapshot {
                note = "current"
            } else if file.name.hasPrefix("snapshots/") {
                note = "replaced by a compaction; a writer removes it after the retention period"
            }
            return [file.name, Format.bytes(file.bytes), note]
        }
        out.write(Format.table(files, indent: "    ").map { $0.trimmingTrailingSpaces }.joined(separator: "\n") + "\n")

        if datastores.isEmpty {
            out.line()
            out.line(
                "no datastores (the store holds \(Format.count(statistics.treeCount, "engine tree")) and no Folio catalog entries)"
            )
        }
        for datastore in datastores {
            out.line()
            out.line("datastore \(datastore.key)")
            let present = try inspector.versionsPresent(in: datastore.key)
            rows = [
                ["instance type", datastore.instanceType],
                ["identifier type", datastore.identifierType],
                ["records", Format.count(datastore.recordCount)],
            ]
            var versions = datastore.versions
            versions += present.keys.filter { !datastore.versions.contains($0) }.sorted()
            for (index, version) in versions.enumerated() {
                var label = version
                if version == datastore.currentVersion { label += " (current)" }
                if !datastore.versions.contains(version) { label += " (not declared)" }
                rows.append([
                    index == 0 ? "versions" : "", "\(label): \(Format.count(present[version] ?? 0, "record"))",
                ])
            }
            rows.append(["indexes", datastore.indexes.isEmpty ? "none" : Format.count(datastore.indexes.count)])
            out.write(Format.table(rows, indent: "  ").joined(separator: "\n") + "\n")
            let indexes = datastore.indexes.map { index in
                [
                    index.name, kind(index.kind), index.storage == .covering ? "covering" : "reference",
                    index.valueType, index.keyPath,
                    index.built ? "built" : "not built", Format.count(index.entryCount, "entry", plural: "entries"),
                ]
            }
            out.write(Format.table(indexes, indent: "    ").joined(separator: "\n") + (indexes.isEmpty ? "" : "\n"))
        }
        describeValues(try inspector.keyValueSummary(), to: out)
        return .success
    }

    /// The key-value store's section: keys and bytes (Docs/CLI.md, `folio info`).
    static func describeValues(_ values: KeyValueSummary, to out: OutputStream) {
        out.line()
        guard values.keyCount > 0 else {
            out.line("key-value store: no values")
            return
        }
        out.line("key-value store")
        let rows = [
            ["keys", Format.count(values.keyCount)],
            [
                "bytes",
                "\(Format.exactBytes(UInt64(values.storedBytes))) of keys and values as stored, "
                    + "in \(Format.bytes(UInt64(values.pageBytes))) of pages",
            ],
        ]
        out.write(Format.table(rows, indent: "  ").joined(separator: "\n") + "\n")
    }

    static func kind(_ kind: IndexKind) -> String {
        switch kind {
        case .oneToOne: "one-to-one"
        case .oneToMany: "one-to-many"
        case .manyToMany: "many-to-many"
        }
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var text = self
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }
}
