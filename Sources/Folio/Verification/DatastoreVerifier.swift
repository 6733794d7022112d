import FolioStorage
/// A problem in a datastore's records or indexes, in the key-value store, or a tree that
/// belongs to neither.
public struct DatastoreProblem: Sendable, Equatable, CustomStringConvertible {
    /// The datastore; for a problem in the key-value store (``Persistence/values``), its
    /// tree `folio/values` (Docs/Format.md §25); for a tree that belongs to no datastore,
    /// that tree's name.
    public var datastore: String
    /// The index involved, if any.
    public var index: String?
    /// What is wrong (naming the record, or the key of the key-value store, where there is
    /// one).
    public var detail: String

    public var description: String {
        "datastore \(datastore)\(index.map { ", index \($0)" } ?? ""): \(detail)"
    }
}

/// The result of ``Persistence/verify(progress:)``: whether the store is sound, and what is
/// wrong if not. What an app acts on is ``isClean``; ``lines`` says why, one problem a line
/// (for a log or a support report). The engine's own report and the counts of what was
/// checked are for tools (`folio verify`): `@_spi(Engine) import Folio`.
///
/// ```swift
/// let report = persistence.verify()
/// if !report.isClean {
///     for line in report.lines { print("store damaged: \(line)") }
/// }
/// ```
public struct PersistenceVerificationReport: Sendable {
    /// The engine's checks: checksums, tree order and balance, byte totals, commit chain.
    @_spi(Engine) public var storage: VerificationReport
    /// Index/record agreement and record well-formedness, per datastore.
    public var problems: [DatastoreProblem]
    /// Records checked.
    @_spi(Engine) public var recordsChecked: Int
    /// Index entries checked.
    @_spi(Engine) public var entriesChecked: Int
    /// Values of the key-value store checked (entries of `folio/values`, Docs/Format.md §25).
    @_spi(Engine) public var valuesChecked: Int = 0
    /// True if the store was written by the engine alone: it holds trees, and none of them
    /// has a name of the Folio layer (`folio/…`, `records/…`, `index/…`; Docs/Format.md
    /// §22). Only the engine's checks apply to such a store; its trees are not reported as
    /// belonging to no datastore. A store with a Folio tree is checked as a Folio store,
    /// and every other tree in it is reported.
    @_spi(Engine) public var isEngineLevel: Bool = false

    /// True if neither the engine nor the datastore checks found anything.
    public var isClean: Bool { storage.isClean && problems.isEmpty }

    /// Every problem, the engine's first, as a line.
    public var lines: [String] { storage.problems.map(\.description) + problems.map(\.description) }
}

extension Persistence {
    /// Checks the whole store: the engine's checks, then, for every datastore in the
    /// catalog, that every record is well formed with a declared version, that every index
    /// entry points to a record that lists it, and that every record has its entries in
    /// every built index; and that every value of the key-value store (``values``) is
    /// stored in layout 1 as valid JSON. Uses only what the store holds (no Swift types), so tools can run
    /// it on any store. Reads one snapshot; safe beside a writer.
    public nonisolated func verify(progress: ((VerificationProgress) -> Void)? = nil) -> PersistenceVerificationReport {
        DatastoreVerifier.verify(core.store, progress: progress)
    }
}

enum DatastoreVerifier {
    static func verify(_ store: Store, progress: ((VerificationProgress) -> Void)?) -> PersistenceVerificationReport {
        store.followIfRootFileChanged()
        let storage = store.verify(progress: progress)
        var report = PersistenceVerificationReport(storage: storage, problems: [], recordsChecked: 0, entriesChecked: 0)
        do throws(StorageError) {
            let view = try store.read()
            let trees = try view.trees().map(\.name)
            if !trees.isEmpty && !trees.contains(where: isFolioTreeName) {
                report.isEngineLevel = true
                return report
            }
            var catalog = try view.cursor(in: DatastoreLayout.catalogTree)
            var known = Set<String>([
                DatastoreLayout.catalogTree, KeyValueLayout.tree, HistoryLayout.tree, RetentionLayout.tree,
            ])
            while let item = try catalog.next() {
                let key = String(decoding: item.key, as: UTF8.self)
                known.insert(DatastoreLayout.recordsTree(key))
                guard let entry = try? CatalogEntry.decode(item.value, datastore: key) else {
                    report.problems.append(DatastoreProblem(datastore: key, detail: "catalog entry is not valid JSON"))
                    continue
                }
                for name in entry.indexes.keys { known.insert(DatastoreLayout.indexTree(key, name)) }
                try check(key, entry, in: view, into: &report)
            }
            try KeyValueVerifier.check(in: view, into: &report)
            try HistoryLayout.check(in: view, into: &report)
            try HistoryLayout.checkRetention(in: view, into: &report)
            for tree in trees where !known.contains(tree) {
                report.problems.append(
                    DatastoreProblem(datastore: tree, detail: "tree \(tree) belongs to no datastore in the catalog"))
            }
        } catch {
            report.problems.append(DatastoreProblem(datastore: "(store)", detail: "\(error)"))
        }
        return report
    }

    /// A name the Folio layer writes or reserves (Docs/Format.md §22, §25).
    static func isFolioTreeName(_ name: String) -> Bool {
        name.hasPrefix("folio/") || name.hasPrefix("records/") || name.hasPrefix("index/")
    }

    private static func check(
        _ key: String, _ entry: CatalogEntry, in view: ReadView,
        into report: inout PersistenceVerificationReport
    ) throws(StorageError) {
        func problem(_ index: String?, _ detail: String) {
            report.problems.append(DatastoreProblem(datastore: key, index: index, detail: detail))
        }
        let recordsTree = DatastoreLayout.recordsTree(key)
        let built = entry.indexes.filter(\.value.built)
        // Records: well formed, a declared version, their entries present in built indexes.
        var records = try view.cursor(in: recordsTree)
        while let item = try records.next() {
            report.recordsChecked += 1
            let id = hex(item.key)
            guard let record = StoredRecord.decode(item.value) else {
                problem(nil, "record \(id) is malformed")
                continue
            }
            if !entry.versions.contains(record.version) {
                problem(nil, "record \(id) has version \(record.version), which the format does not declare")
            }
            for (name, state) in built {
                let tree = DatastoreLayout.indexTree(key, name)
                for value in record.indexKeys[name] ?? [] {
                    let entryKey = IndexEntry.key(value: value, identifier: item.key, unique: state.kind == .oneToOne)
                    guard let stored = try view.get(entryKey, in: tree), let decoded = IndexEntry.decode(stored) else {
                        problem(name, "record \(id) has no entry for one of its values")
                        continue
                    }
                    if decoded.identifier != item.key {
                        problem(name, "the entry of a value of record \(id) points to \(hex(decoded.identifier))")
                    }
                    if state.storage == .covering {
                        let copy = decoded.record.flatMap(StoredRecord.decode)
                        if copy?.version != record.version || copy?.payload != record.payload {
                            problem(name, "the covering entry of record \(id) does not hold the record")
                        }
                    }
                }
            }
        }
        // Index entries: well formed, pointing to a record that lists the value.
        for (name, state) in built {
            var entries = try view.cursor(in: DatastoreLayout.indexTree(key, name))
            while let item = try entries.next() {
                report.entriesChecked += 1
                guard let decoded = IndexEntry.decode(item.value) else {
                    problem(name, "entry \(hex(item.key)) is malformed")
                    continue
                }
                let value: [UInt8]
                if state.kind == .oneToOne {
                    value = item.key
                } else {
                    guard item.key.count > decoded.identifier.count,
                        item.key.suffix(decoded.identifier.count).elementsEqual(decoded.identifier)
                    else {
                        problem(name, "entry \(hex(item.key)) does not end with its identifier")
                        continue
                    }
                    value = Array(item.key.dropLast(decoded.identifier.count))
                }
                guard let bytes = try view.get(decoded.identifier, in: recordsTree) else {
                    problem(name, "entry \(hex(item.key)) points to \(hex(decoded.identifier)), which does not exist")
                    continue
                }
                guard let record = StoredRecord.decode(bytes), (record.indexKeys[name] ?? []).contains(value) else {
                    problem(
                        name,
                        "entry \(hex(item.key)) points to \(hex(decoded.identifier)), which does not list that value")
                    continue
                }
            }
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        "0x"
            + bytes.prefix(32).map {
                String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16)
            }.joined()
            + (bytes.count > 32 ? "…" : "")
    }
}
