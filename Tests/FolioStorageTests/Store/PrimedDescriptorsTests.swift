import Testing
import FolioTestSupport
@testable import FolioStorage

/// A commit fills its new root's catalog lookups (``CommittedRoot/prime(from:written:)``)
/// with the entries it wrote and those its base had looked up for trees it did not touch,
/// so that the next transaction looks none up again. What it fills must be what a lookup
/// in the catalog finds: checked against a root with nothing filled, for trees written,
/// emptied, dropped, untouched, and never created, over a run of commits.
@Suite struct PrimedDescriptorsTests {
    @Test func aCommitsFilledLookupsEqualTheCatalogs() throws {
        let store = try Store.open(at: "/s", options: testOptions(try memoryFileSystem()))
        defer { store.close() }
        let names = ["a", "b", "c", "gone", "never"]
        func check(_ step: String) throws {
            let root = try store.read().root
            let fresh = CommittedRoot(record: root.record, pages: root.pages)
            for name in names {
                #expect(
                    try root.descriptor(of: name) == fresh.descriptor(of: name), "\(step): tree \(name)")
            }
        }
        try store.write { transaction in
            for tree in ["a", "b", "c", "gone"] { try transaction.put([1], for: [1], in: tree) }
        }
        try check("created")
        // Every tree looked up, so the next commit carries entries of trees it does not touch.
        for name in names { _ = try store.read().root.descriptor(of: name) }
        for round in 0..<20 {
            try store.write { transaction in
                try transaction.put([UInt8(round)], for: [UInt8(round), 2], in: "a")
                if round == 5 { _ = try transaction.remove([1], from: "b") }  // "b" emptied
                if round == 10 { _ = try transaction.dropTree("gone") }
                if round == 15 { try transaction.put([9], for: [9], in: "gone") }  // created again
            }
            try check("round \(round)")
        }
    }
}
