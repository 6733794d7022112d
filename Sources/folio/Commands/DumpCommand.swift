@_spi(Engine) import Folio
import FolioStorage

/// `folio dump STORE DATASTORE`: records as JSON, in identifier or index order;
/// `folio dump STORE --values`: the key-value store's values as JSON, in key order.
enum DumpCommand: Command {
    static let name = "dump"
    static let summary = "print the records of a datastore, or the key-value store's values, as JSON"
    static let positionals = [
        PositionalSpec("STORE", help: "the store's directory"),
        PositionalSpec(
            "DATASTORE", optional: true, help: "the datastore's key (as 'folio info' lists them); not with --values"),
    ]
    static let options = [
        OptionSpec("values", help: "the key-value store's values (persistence.values) instead of a datastore"),
        OptionSpec("index", value: "NAME", help: "in the order of this index (default: identifier order)"),
        OptionSpec(
            "from", value: "V",
            help: "start at this identifier, index value with --index, or key with --values (inclusive)"),
        OptionSpec(
            "to", value: "V", help: "end at this identifier, index value with --index, or key with --values (inclusive)"
        ),
        OptionSpec("limit", value: "N", help: "print at most N records (or values)"),
        OptionSpec("reverse", help: "descending order"),
        OptionSpec("json", help: "one compact JSON document per line (default: pretty-printed)"),
    ]
    static let showsProgress = false
    static let details = [
        """
        Each record is printed as one JSON document: {"id": IDENTIFIER, "record": RECORD, \
        "version": VERSION}, where RECORD is the record's JSON as stored (numbers exactly as \
        stored), VERSION the version it is stored in, and IDENTIFIER a JSON number for \
        integer and floating-point identifiers, true/false for Bool, and a string otherwise \
        (UUIDs in upper case, dates in ISO 8601). Object members are sorted by key. By \
        default each document is pretty-printed with two-space indentation, one after \
        another; with --json each is on one line with no spaces.
        """,
        """
        --from and --to are read as the type of the identifier, or of the index's values with \
        --index (integers, floating point, String, Bool, UUID, ISO 8601 dates, "nil" for an \
        optional); both bounds are inclusive. Through a many-to-many index a record appears \
        once per matching value. Reads one committed generation, read-only.
        """,
        """
        With --values (and no DATASTORE), prints the key-value store instead, in the order \
        of the keys' UTF-8 bytes: each value as {"key": KEY, "value": VALUE}, where KEY is \
        the key's name and VALUE its JSON as stored (a value of any type: number, string, \
        null, object, array). --from and --to are key names; --limit, --reverse and --json \
        apply as for records; --index does not.
        """,
    ]
    static let examples = [
        "folio dump ~/Library.folio authors",
        "folio dump ~/Library.folio books --index year --from 1990 --to 1999 --limit 10",
        "folio dump --json ~/Library.folio books | jq -r .record.title",
        "folio dump ~/Library.folio --values --from user/ --to user/~",
    ]

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        if arguments.flag("values") {
            if arguments.positionals.count > 1 {
                throw UsageError("--values dumps the key-value store: give no DATASTORE with it", command: name)
            }
            if arguments.value("index") != nil {
                throw UsageError("--index is for a datastore's records, not for --values", command: name)
            }
            return try dumpValues(arguments)
        }
        guard arguments.positionals.count > 1 else {
            throw UsageError("missing DATASTORE (or --values for the key-value store)", command: name)
        }
        let path = arguments.positionals[0]
        let key = arguments.positionals[1]
        let limit = try arguments.count("limit")
        let compact = arguments.flag("json")
        let store = try StoreAccess.openForReading(path)
        defer { store.close() }
        let inspector = StoreInspector(store: store)
        let summary = try inspector.datastore(key)
        let out = OutputStream.standardOutput
        try inspector.forEachRecord(
            in: key, index: arguments.value("index"), from: arguments.value("from"),
            to: arguments.value("to"), order: arguments.flag("reverse") ? .descending : .ascending,
            limit: limit
        ) { record in
            let json: JSONValue
            do {
                json = try JSONValue.parse(record.json)
            } catch {
                throw CommandFailure(
                    "\(key): record \(record.identifier) is not valid JSON: \(error)", status: .storeError)
            }
            let document = JSONValue.object([
                ("id", identifier(record.identifier, type: summary.identifierType)),
                ("record", json),
                ("version", .string(record.version)),
            ])
            out.line(compact ? document.compact() : document.pretty())
            return true
        }
        out.flush()
        return .success
    }

    /// `--values`: each value of the key-value store as {"key": KEY, "value": VALUE}.
    static func dumpValues(_ arguments: ParsedArguments) throws -> ExitStatus {
        let limit = try arguments.count("limit")
        let compact = arguments.flag("json")
        let store = try StoreAccess.openForReading(arguments.positionals[0])
        defer { store.close() }
        let out = OutputStream.standardOutput
        try StoreInspector(store: store).forEachValue(
            from: arguments.value("from"), to: arguments.value("to"),
            order: arguments.flag("reverse") ? .descending : .ascending,
            limit: limit
        ) { value in
            let json: JSONValue
            do {
                json = try JSONValue.parse(value.json)
            } catch {
                throw CommandFailure(
                    "key-value store: the value of key \"\(value.key)\" is not valid JSON: \(error)",
                    status: .storeError)
            }
            let document = JSONValue.object([("key", .string(value.key)), ("value", json)])
            out.line(compact ? document.compact() : document.pretty())
            return true
        }
        out.flush()
        return .success
    }

    /// The identifier as JSON: a number for numeric types, a Bool for Bool, else a string.
    static func identifier(_ text: String, type: String) -> JSONValue {
        switch type {
        case "Swift.Int", "Swift.Int64", "Swift.Int32", "Swift.Int16", "Swift.Int8":
            if Int64(text) != nil { return .number(text) }
        case "Swift.UInt", "Swift.UInt64", "Swift.UInt32", "Swift.UInt16", "Swift.UInt8":
            if UInt64(text) != nil { return .number(text) }
        case "Swift.Double", "Swift.Float":
            if let value = Double(text), value.isFinite, (try? JSONValue.parse(Array(text.utf8))) == .number(text) {
                return .number(text)
            }
        case "Swift.Bool":
            if let value = Bool(text) { return .bool(value) }
        default:
            break
        }
        return .string(text)
    }
}
