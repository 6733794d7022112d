@testable import FolioStorage

/// Every page reachable from a store's newest root, with its kind: what corruption tests flip.
struct ReachablePage {
    var address: PageAddress
    var kind: String  // "leaf", "branch", "overflow", "commit"
}

func reachablePages(of store: Store) throws -> [ReachablePage] {
    let root = try store.read().root
    var pages = [ReachablePage(address: root.record.commitPage, kind: "commit")]
    func walk(_ address: PageAddress) throws {
        switch try root.pages.node(at: address) {
        case .leaf(let leaf):
            pages.append(ReachablePage(address: address, kind: "leaf"))
            for value in leaf.values {
                if case .overflow(let overflow) = value { pages.append(.init(address: overflow, kind: "overflow")) }
            }
        case .branch(let branch):
            pages.append(ReachablePage(address: address, kind: "branch"))
            for child in branch.children { try walk(child) }
        }
    }
    if !root.record.catalogRoot.isNone { try walk(root.record.catalogRoot) }
    for (_, descriptor) in try root.allDescriptors() where !descriptor.root.isNone { try walk(descriptor.root) }
    return pages
}

/// Decodes the page at `address` from raw file bytes as its kind requires.
func decodePage(_ bytes: [UInt8], at address: PageAddress, kind: String) throws {
    switch kind {
    case "commit": _ = try CommitRecord.decode(bytes, address: address, file: "test")
    case "overflow": _ = try TreePage.decodeOverflow(bytes, address: address, file: "test")
    default: _ = try TreePage.decode(bytes, address: address, file: "test")
    }
}

/// The commit pages of the newest root's chain that lie in its snapshot file, newest first:
/// not part of the live tree, but checked by verify (the change records live there).
func commitChain(of store: Store) throws -> [PageAddress] {
    let root = try store.read().root
    var addresses: [PageAddress] = []
    var location: CommitLocation? = root.record.location
    while let current = location, current.fileNumber == root.record.snapshotFile {
        addresses.append(current.address)
        location = try root.pages.commit(at: current.address).previous
    }
    return addresses
}
