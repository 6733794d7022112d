@_spi(Engine) import Folio
import FolioStorage

/// `folio diff STORE FROM [TO]`: the records that differ between two generations.
enum DiffCommand: Command {
    static let name = "diff"
    static let summary = "print the records that differ between two generations of a store"
    static let positionals = [
        PositionalSpec("STORE", help: "the store's directory"),
        PositionalSpec("FROM", help: "the first generation (as 'folio log' lists them)"),
        PositionalSpec("TO", optional: true, help: "the second generation (default: the newest)"),
    ]
    static let options = [
        OptionSpec("datastore", value: "KEY", help: "only this datastore"),
        OptionSpec("json", help: "one compact JSON document per line (default: pretty-printed)"),
    ]
    static let showsProgress = false
    static let details = [
        """
        Opens the store read-only and prints one JSON document per record whose stored value \
        differs between generation FROM and generation TO, datastore by datastore in key \
        order and each in identifier order: {"datastore": KEY, "id": IDENTIFIER, "change": \
        "created" | "updated" | "deleted", "before": {"record": RECORD, "version": VERSION} \
        or null, "after": the same or null}, with RECORD the record's JSON as stored and \
        IDENTIFIER as 'folio dump' prints it. A record changed and changed back in between is \
        not printed. FROM may be the later generation: the changes then lead back to it.
        """,
        """
        Only the records the commits in between name are read, at both generations (each \
        commit records what it changed); a datastore changed wholesale is read whole at both. \
        Both generations must be ones the store still holds ('folio log' lists them); \
        another fails with the oldest and newest it holds (exit status 3).
        """,
    ]
    static let examples = [
        "folio diff ~/Library.folio 120", "folio diff ~/Library.folio 120 135 --datastore books --json",
    ]

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let generation = { (index: Int, label: String) throws(UsageError) -> UInt64? in
            guard arguments.positionals.count > index else { return nil }
            guard let value = UInt64(arguments.positionals[index]) else {
                throw UsageError(
                    "\(label) must be a generation number, not '\(arguments.positionals[index])'", command: name)
            }
            return value
        }
        guard let from = try generation(1, "FROM") else { throw UsageError("missing FROM", command: name) }
        let to = try generation(2, "TO")
        let compact = arguments.flag("json")
        let store = try StoreAccess.openForReading(arguments.positionals[0])
        defer { store.close() }
        let inspector = StoreInspector(store: store)
        let out = OutputStream.standardOutput
        try inspector.forEachDifference(from: from, to: to, datastore: arguments.value("datastore")) { difference in
            let side = { (record: InspectedRecord?) throws -> JSONValue in
                guard let record else { return .null }
                let json: JSONValue
                do {
                    json = try JSONValue.parse(record.json)
                } catch {
                    throw CommandFailure(
                        "\(difference.datastore): record \(record.identifier) is not valid JSON: \(error)",
                        status: .storeError)
                }
                return .object([("record", json), ("version", .string(record.version))])
            }
            let change = difference.before == nil ? "created" : difference.after == nil ? "deleted" : "updated"
            let document = JSONValue.object([
                ("datastore", .string(difference.datastore)),
                ("id", DumpCommand.identifier(difference.identifier, type: difference.identifierType)),
                ("change", .string(change)),
                ("before", try side(difference.before)),
                ("after", try side(difference.after)),
            ])
            out.line(compact ? document.compact() : document.pretty())
            return true
        }
        out.flush()
        return .success
    }
}
