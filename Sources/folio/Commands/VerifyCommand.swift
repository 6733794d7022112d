@_spi(Engine) import Folio
import FolioStorage

/// `folio verify STORE`: every check the engine and the datastore layer know, read-only.
enum VerifyCommand: Command {
    static let name = "verify"
    static let summary = "check every page, tree, index and change record of a store"
    static let positionals = [PositionalSpec("STORE", help: "the store's directory")]
    static let options: [OptionSpec] = []
    static let showsProgress = true
    static let details = [
        """
        Checks the newest committed generation: every page's checksum, kind and length; \
        every tree's key order, separators, balance and page bounds; key counts and byte \
        totals against the catalog; that reachable pages do not overlap and add up to the \
        live bytes; the root file and the info file; the commit pages and their change \
        records back to the start of the current snapshot file; and for every datastore, \
        that each record is well formed with a declared version, that every index entry \
        points to a record that lists it, and that every record has its entries in every \
        built index; and that every value of the key-value store (the tree folio/values) is \
        stored in layout 1 as valid JSON. A store written by the engine alone (no tree of \
        the Folio layer: folio/..., records/..., index/...) is an engine-level store: verify \
        says so and runs the engine's checks only.
        """,
        """
        Prints each problem on its own line, starting "problem: ", with its location (file \
        and byte offset, and tree; or datastore, index and record; or the key-value store's \
        key), then a summary line. \
        It also looks past the newest root slot, as a writer's open would: commits in \
        complete runs there (normal for a moment while a writer commits; after a writer \
        was killed or the power cut, until the next writer opens) are printed as a line \
        starting "note: pending recovery", which is not a problem: the next writer's open \
        adopts them, and until then readers see the slot's generation. A damaged run there that later complete runs chain to is a problem, \
        naming the generations that open will lose. \
        Read-only: takes no lock and writes nothing, so it is safe on a store another \
        process is writing (it checks the generation committed when it starts). Progress \
        goes to standard error.
        """,
    ]
    static let examples = ["folio verify ~/Library.folio", "folio verify --quiet ~/Library.folio || echo damaged"]

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let path = arguments.positionals[0]
        let out = OutputStream.standardOutput
        let store: Store
        do {
            store = try StoreAccess.openForReading(path)
        } catch .corruption(let corruption) {
            // Damage that keeps the store from opening at all is a finding, not a usage problem.
            out.line("problem: \(corruption)")
            out.line("1 problem found: the store cannot be opened")
            return .problemsFound
        }
        defer { store.close() }
        // Nothing but the verification itself reads pages: a damaged catalog is a finding.
        out.line("verifying \(path) at generation \(store.generation)")
        out.flush()
        let reporter = ProgressReporter(mode: ProgressReporter.mode(quiet: arguments.flag("quiet")), verb: "verified")
        defer { reporter.abandon() }
        let clock = ContinuousClock()
        let start = clock.now
        let report = StoreInspector(store: store).verify { progress in
            reporter.update(progress.bytesChecked, of: progress.totalBytes)
        }
        reporter.finish(report.storage.bytesChecked)
        let elapsed = clock.now - start
        for line in report.lines {
            out.line("problem: " + CommandFailure.oneLine(line))
        }
        if report.isEngineLevel {
            // Not a finding: a store written through FolioStorage alone has no datastores.
            out.line(
                "engine-level store: no Folio datastores or values (no folio/catalog), so only the engine's checks apply"
            )
        }
        // Not problems: they do not change the exit status.
        for note in report.storage.notes {
            out.line("note: " + CommandFailure.oneLine(note.detail) + " (\(note.file) @\(note.offset))")
        }
        let storage = report.storage
        out.line(
            "checked \(Format.count(storage.pagesChecked, "page")) (\(Format.bytes(storage.bytesChecked))) in "
                + "\(Format.count(storage.treesChecked, "tree")), \(Format.count(storage.commitsChecked, "commit page")), "
                + "\(Format.count(report.recordsChecked, "record")), "
                + "\(Format.count(report.entriesChecked, "index entry", plural: "index entries")) and "
                + "\(Format.count(report.valuesChecked, "value")) in \(Format.duration(elapsed))")
        let count = report.lines.count
        if count == 0 {
            out.line("no problems found")
            return .success
        }
        out.line("\(Format.count(count, "problem")) found")
        return .problemsFound
    }
}
