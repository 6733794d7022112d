import Foundation
import Testing
@testable import FolioStorage
import FolioTestSupport

/// The batch write's size bounds in the shape that once broke them: one leaf overfilled far
/// past a page (hundreds of puts between two neighbouring keys) beside a neighbour the same
/// batch nearly empties. Merging the two gives a node bigger than two pages; both halves of
/// it must end within the split size, not only the one the restoring pass looks at again.
@Suite struct BatchBoundsTests {
    static func key(_ n: Int) -> [UInt8] { Array(String(format: "k%04d", n).utf8) }

    static func sizeViolations(_ tree: TreeState) -> [String] {
        tree.invariantViolations().filter { $0.contains("split size") || $0.contains("minimum fill") }
    }

    @Test(arguments: [40, 160, 400])
    func anOverfilledLeafBesideAnEmptiedOneEndsWithinBounds(inserted: Int) throws {
        let fileSystem = MemoryFileSystem()
        try fileSystem.createDirectory("/stores")
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        let editor = TreeEditor(reader: try store.read().root.reader)
        let value = LeafValue.inline([UInt8](repeating: 7, count: 100)[...])
        // From keeping one key of the right neighbour's leaf to removing past it.
        for removed in stride(from: 1, through: 90, by: 1) {
            let tree = TreeState(name: "t", descriptor: nil)
            tree.exists = true
            let keys = (0..<1_000).map(Self.key)
            _ = try editor.apply(keys, keys.map { _ in value }, in: tree)
            #expect(Self.sizeViolations(tree) == [], "the tree as built")
            var changes: [(key: [UInt8], value: LeafValue?)] = (0..<inserted).map {
                (Self.key(500) + Array(String(format: "/%04d", $0).utf8), value)
            }
            changes += (501..<(501 + removed)).map { (Self.key($0), nil) }
            changes.sort { KeyBytes.compare($0.key, $1.key) < 0 }
            _ = try editor.apply(changes.map(\.key), changes.map(\.value), in: tree)
            let violations = Self.sizeViolations(tree)
            #expect(violations == [], "\(inserted) puts, \(removed) removals: \(violations)")
            if !violations.isEmpty { return }
        }
    }
}
