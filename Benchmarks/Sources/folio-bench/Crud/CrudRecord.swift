/// The record of the crud and scale suites, after Dflat's benchmark document: an id, a
/// title, a color in 0...2, a tag, a priority and about 100 bytes of text.
///
/// Every system stores it through its own `Codable` machinery (GRDB: `FetchableRecord` and
/// `PersistableRecord`, in `GRDBCrudSystem.swift`; Folio: its datastore API); the JSON floors
/// encode it with Foundation alone.
struct CrudRecord: Codable, Sendable, Equatable {
    /// Primary key, 1...n.
    var id: Int64
    var title: String
    /// 0, 1 or 2; `scan-filter` looks for 1 without an index (a third of the records).
    var color: Int
    var tag: String
    /// Uniform in 0..<n; `range-index` reads a tenth of its range through a secondary index.
    var priority: Int
    /// About 100 bytes of lowercase words.
    var text: String

    private static let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
        "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
        "uniform", "victor", "whiskey", "xray", "yankee", "zulu",
    ]

    /// The record with `id`, the same in every run and every system. `priorityDomain` is the
    /// size of the priority range (the data set's n).
    static func make(id: Int64, priorityDomain: Int) -> CrudRecord {
        var rng = SplitMix64(seed: UInt64(bitPattern: id) &* 0x2545_F491_4F6C_DD1D)
        var text = ""
        while text.utf8.count < 96 {
            if !text.isEmpty { text += " " }
            text += words[Int(rng.next() % UInt64(words.count))]
        }
        return CrudRecord(
            id: id, title: "title-\(id)", color: Int(id % 3), tag: "tag-\(id % 100)",
            priority: Int(rng.next() % UInt64(max(1, priorityDomain))), text: text)
    }
}

/// The n records of one data set and the answers the read workloads must find.
final class CrudDataset: Sendable {
    let n: Int
    /// Which kind of data set: `crud` (random priorities) or another suite's variant; part
    /// of the fixture's name, so stores of different data sets are never mixed up.
    let label: String
    /// Records with ids 1...n.
    let records: [CrudRecord]
    /// How many records have color 1.
    let colorOneCount: Int
    /// The priority range `range-index` reads: a tenth of 0..<n, starting at 40 %.
    let priorityRange: Range<Int>
    /// How many records fall in ``priorityRange``.
    let priorityRangeCount: Int

    /// The crud data set: `make(id:priorityDomain:)` for ids 1...n.
    convenience init(n: Int) {
        self.init(
            n: n, label: "crud", records: (1...max(1, n)).map { CrudRecord.make(id: Int64($0), priorityDomain: n) })
    }

    /// A data set of `records` (ids 1...n, in id order).
    init(n: Int, label: String, records: [CrudRecord]) {
        self.n = n
        self.label = label
        self.records = records
        colorOneCount = records.lazy.filter { $0.color == 1 }.count
        let low = n * 4 / 10
        priorityRange = low..<(low + max(1, n / 10))
        priorityRangeCount = records.lazy.filter { [priorityRange] in priorityRange.contains($0.priority) }.count
    }

    /// The ids in a random but repeatable order (for loads and updates).
    func shuffledIDs(seed: UInt64) -> [Int64] {
        shuffledIndices(records.count, seed: seed).map { records[$0].id }
    }
}
