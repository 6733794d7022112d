import Testing
@testable import FolioStorage
import FolioTestSupport

/// A reachable page of a store's newest generation, with a public-API read that must read
/// it: corruption tests damage the page and then make that read.
struct ProbedPage: CustomStringConvertible {
    enum Probe {
        /// `view.trees()`: walks every catalog page.
        case catalog
        /// `view.get(key, in: tree)`: descends through the page.
        case get(tree: String, key: [UInt8])
        /// `view.changes()`: reads the commit page.
        case changes
    }

    var address: PageAddress
    var kind: String  // "leaf", "branch", "overflow", "commit"
    var probe: Probe

    var description: String { "\(kind) page \(address)" }

    /// Makes the read; returns whatever it returned (data, if the damage went unseen).
    func read(_ view: ReadView) throws -> String {
        switch probe {
        case .catalog: return "\(try view.trees().map(\.name))"
        case .get(let tree, let key): return "\(try view.get(key, in: tree)?.count ?? -1) bytes"
        case .changes: return "\(try view.changes())"
        }
    }
}

/// Every page reachable from the store's newest root (catalog pages, every tree's
/// branches, leaves and overflow pages, the commit page), each with its probe.
func probedPages(of store: Store) throws -> [ProbedPage] {
    let root = try store.read().root
    var pages = [ProbedPage(address: root.record.commitPage, kind: "commit", probe: .changes)]
    /// Walks a subtree; returns its first key (the probe of every page on its left edge).
    func walk(_ address: PageAddress, tree: String?) throws -> [UInt8] {
        switch try root.pages.node(at: address) {
        case .leaf(let leaf):
            let probe: ProbedPage.Probe = tree.map { .get(tree: $0, key: Array(leaf.keys[0])) } ?? .catalog
            pages.append(ProbedPage(address: address, kind: "leaf", probe: probe))
            for (index, value) in leaf.values.enumerated() {
                if case .overflow(let overflow) = value, let tree {
                    pages.append(
                        ProbedPage(
                            address: overflow, kind: "overflow", probe: .get(tree: tree, key: Array(leaf.keys[index]))))
                }
            }
            return Array(leaf.keys[0])
        case .branch(let branch):
            var first: [UInt8] = []
            for (index, child) in branch.children.enumerated() {
                let key = try walk(child, tree: tree)
                if index == 0 { first = key }
            }
            let probe: ProbedPage.Probe = tree.map { .get(tree: $0, key: first) } ?? .catalog
            pages.append(ProbedPage(address: address, kind: "branch", probe: probe))
            return first
        }
    }
    if !root.record.catalogRoot.isNone { _ = try walk(root.record.catalogRoot, tree: nil) }
    for (name, descriptor) in try root.allDescriptors() where !descriptor.root.isNone {
        _ = try walk(descriptor.root, tree: name)
    }
    return pages
}

/// A memory store with every page kind: a two-level tree, overflow values, the catalog, and
/// a commit page with a change record. Returns the store (open, cache off) and its file.
func storeWithEveryPageKind(_ fileSystem: MemoryFileSystem, keys: Int = 800) throws -> (store: Store, file: String) {
    let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem, cache: 0))
    try write(sampleModel(count: keys, seed: 11), to: store)
    try store.write { try $0.put(bytes("changed"), for: bytes("key-0"), in: "first") }
    return (store, "/stores/s/snapshots/0000000000000001.folio")
}

/// Expects `body` to fail with a corruption error naming `file` and `offset`, with the
/// stored and computed checksums (Docs/Durability.md §7, A5).
func expectCorruption(
    file: String, offset: UInt64, checksums: Bool = true, _ context: @autoclosure () -> String,
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> String
) {
    do {
        let returned = try body()
        Issue.record(
            "\(context()): damage went unseen; the read returned \(returned.prefix(80))", sourceLocation: sourceLocation
        )
    } catch let StorageError.corruption(corruption) {
        #expect(corruption.file == file, "\(context()): \(corruption)", sourceLocation: sourceLocation)
        #expect(corruption.offset == offset, "\(context()): \(corruption)", sourceLocation: sourceLocation)
        if checksums {
            #expect(
                corruption.expectedChecksum != nil && corruption.actualChecksum != nil,
                "\(context()): no checksums in \(corruption)", sourceLocation: sourceLocation)
        }
    } catch {
        Issue.record("\(context()): \(error) is not a corruption error", sourceLocation: sourceLocation)
    }
}
