import FolioStorage
import FolioTestSupport

/// Everything a read view holds, as the reference model, for exact comparisons.
func contents(of view: ReadView) throws -> TreeModel {
    var model = TreeModel()
    for (name, _) in try view.trees() {
        var cursor = try view.cursor(in: name)
        model.trees[name] = []
        while let entry = try cursor.next() { model.put(entry.value, for: entry.key, in: name) }
    }
    return model
}

/// Writes `model`'s trees in one transaction (trees not in `model` are left alone).
func write(_ model: TreeModel, to store: Store) throws {
    try store.write { txn in
        for (tree, entries) in model.trees {
            for entry in entries { try txn.put(entry.value, for: entry.key, in: tree) }
        }
    }
}

/// A deterministic model: `count` keys over two trees, some values large enough for
/// overflow pages.
func sampleModel(count: Int, seed: UInt64, generation: Int = 0) -> TreeModel {
    var rng = SplitMix64(seed: seed)
    var model = TreeModel()
    for i in 0..<count {
        let tree = i % 3 == 0 ? "second" : "first"
        let length = i % 50 == 0 ? 3_000 : Int.random(in: 1...120, using: &rng)
        let value = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) } + Array("g\(generation)".utf8)
        model.put(value, for: Array("key-\(i * 7919 % 100_003)".utf8), in: tree)
    }
    return model
}

/// A memory file system with a `/stores` directory.
func memoryFileSystem() throws -> MemoryFileSystem {
    let fileSystem = MemoryFileSystem()
    try fileSystem.createDirectory("/stores")
    return fileSystem
}
