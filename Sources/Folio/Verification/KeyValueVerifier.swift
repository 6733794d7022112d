import FolioStorage

/// The Folio-layer check of the key-value store's tree (Docs/Format.md §25): every stored
/// value starts with layout byte 1 and the rest is one valid JSON text. The values' Swift
/// types are not known here, so this is all that can be checked without the app.
enum KeyValueVerifier {
    /// Checks every entry of `folio/values` in `view` (none if the tree is absent), adding a
    /// problem naming the key for each bad value and counting the values checked.
    static func check(in view: ReadView, into report: inout PersistenceVerificationReport) throws(StorageError) {
        var entries = try view.cursor(in: KeyValueLayout.tree)
        while let item = try entries.next() {
            report.valuesChecked += 1
            if let reason = problem(with: item.value) {
                report.problems.append(
                    DatastoreProblem(
                        datastore: KeyValueLayout.tree,
                        detail: "key \(name(item.key)): \(reason)"))
            }
        }
    }

    /// Why `stored` is not a stored value of layout 1, or nil if it is one.
    static func problem(with stored: [UInt8]) -> String? {
        guard let layout = stored.first else { return "the stored value is empty (it needs layout byte 1, then JSON)" }
        guard layout == KeyValueLayout.layoutByte else { return "unknown value layout \(layout) (expected 1)" }
        do throws(JSONSyntax.Failure) {
            try JSONSyntax.check(stored[1...])
        } catch {
            return "the value is not valid JSON: \(error)"
        }
        return nil
    }

    /// A key as a problem shows it: the name in quotes, or its bytes in hexadecimal if they
    /// are not UTF-8 (a reader accepts any key the engine allows, §25).
    static func name(_ key: [UInt8]) -> String {
        guard let text = String(validating: key, as: UTF8.self) else { return DatastoreVerifier.hex(key) }
        return "\"" + text + "\""
    }
}
