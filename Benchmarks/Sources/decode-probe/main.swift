import Foundation
import Folio
import FolioStorage

// decode-probe: what reading a crud record costs in instructions, for callgrind, which
// folio-bench's async main does not survive (valgrind 3.19 crashes in dispatch's main-thread
// exit): a synchronous main that waits for one task. Usage:
//   decode-probe create DIR 10000   build a store of 10,000 crud records in DIR
//   decode-probe scan DIR K         K full scans (`load(...)`), keeping color == 1
//   decode-probe get DIR K          K passes of `load(id)` over every id
//   decode-probe decode DIR K       K passes of FolioJSONDecoder over the 10,000 records' JSON
//   decode-probe update DIR K       K calls of `update(where: priority >= 0)` setting every tag
//   decode-probe range DIR K        K queries of `fetch(where: (4000..<5000).contains(priority))`
//   decode-probe point DIR K        K passes of `first(where: id == x)` over every id
//   decode-probe commit DIR K       K durable single-record commits (`persist` of a changed tag)
//   decode-probe first DIR K        K durable single-record commits, each timed (a fresh
//                                   process's first writes: mp-first-write-beside-idle)
//   decode-probe icommit DIR K      the same, each also changing the indexed priority
//   decode-probe batches DIR K      K transactions of 100 new records into a fresh store
//                                   (folio-bench's mt-insert work for one writer)
//   decode-probe grdb-batches DIR K the same through GRDB.swift (GRDBSide.swift)
//   decode-probe ecommit DIR K      K durable one-key engine commits into a fresh store in DIR
//                                   (folio-bench's engine commit-latency, FolioStorage alone)
// Per record: run K = 1 and K = 2 under `valgrind --tool=callgrind` on fresh copies of the
// store; (instructions(2) - instructions(1)) / 10,000.

/// folio-bench's crud record (Crud/CrudRecord.swift), the same values for the same id.
struct CrudRecord: Codable, Sendable, Equatable, Identifiable {
    var id: Int64
    var title: String
    var color: Int
    var tag: String
    var priority: Int
    var text: String

    static let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
        "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
        "uniform", "victor", "whiskey", "xray", "yankee", "zulu",
    ]
    static func make(id: Int64, n: Int) -> CrudRecord {
        var state = UInt64(bitPattern: id) &* 0x2545_F491_4F6C_DD1D
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var text = ""
        while text.utf8.count < 96 {
            if !text.isEmpty { text += " " }
            text += words[Int(next() % UInt64(words.count))]
        }
        return CrudRecord(
            id: id, title: "title-\(id)", color: Int(id % 3), tag: "tag-\(id % 100)",
            priority: Int(next() % UInt64(n)), text: text)
    }
}

/// folio-bench's crud format: an index on priority, none on color.
struct CrudRecordFormat: DatastoreFormat {
    enum Version: Int, CaseIterable, Sendable { case one = 1 }
    static let key = "records"
    static let currentVersion = Version.one
    typealias Instance = CrudRecord
    let priority = Index(\CrudRecord.priority)
    init() {}
}

let arguments = CommandLine.arguments
let mode = arguments[1]
let directory = arguments[2]
let count = Int(arguments[3])!
let n = 10_000

/// folio-bench's commit-latency: K one-key transactions through the engine, each durable
/// before `write` returns; a 16-byte pseudo-random key and a 100-byte value as EngineData's.
func engineCommits(_ commits: Int) throws -> Int {
    let store = try Store.open(at: directory)
    let value = [UInt8](repeating: 0xA5, count: 100)
    for i in 0..<commits {
        var state = UInt64(i) &* 0x9E37_79B9_7F4A_7C15 ^ 0x5EED
        let key = withUnsafeBytes(of: (state.bigEndian, (state &+ 1).bigEndian)) { Array($0) }
        state &+= 1
        try store.write { transaction in try transaction.put(value, for: key, in: "bench") }
    }
    store.close()
    return commits
}

func run() async throws -> Int {
    if mode == "ecommit" { return try engineCommits(count) }
    if mode == "grdb-batches" { return try grdbBatches(directory: directory, transactions: count, batch: 100) }
    if mode == "decode" {
        let blobs = try (1...n).map { try FolioJSONEncoder().encode(CrudRecord.make(id: Int64($0), n: n)) }
        let decoder = FolioJSONDecoder()
        var sum = 0
        for _ in 0..<count {
            for blob in blobs { sum &+= try decoder.decode(CrudRecord.self, from: blob).priority }
        }
        return sum
    }
    var options = PersistenceOptions(durability: .full, recordCache: nil)
    // FOLIO_SPILL_MIB: the transaction spill budget, for measuring a large transaction's
    // peak memory against it (default: PersistenceOptions' own).
    if let mebibytes = ProcessInfo.processInfo.environment["FOLIO_SPILL_MIB"].flatMap(Int.init) {
        options.transactionSpillBytes = mebibytes << 20
    }
    // FOLIO_AUTO_COMPACTION=off: no automatic compaction, so that a profile of `commit`
    // holds only what is on a commit's path (compaction runs on another thread).
    if ProcessInfo.processInfo.environment["FOLIO_AUTO_COMPACTION"] == "off" { options.autoCompaction = nil }
    let persistence = try Persistence(at: directory, options: options)
    let records = persistence.datastore(for: CrudRecordFormat.self)
    if mode == "batches" {
        for slice in batchRecords(transactions: count, batch: 100) {
            try await persistence.perform { for record in slice { try await records.persist(record) } }
        }
        try await persistence.close()
        return count * 100
    }
    if mode == "create" {
        try await persistence.perform {
            for id in 1...count { try await records.persist(CrudRecord.make(id: Int64(id), n: count)) }
        }
        try await persistence.close()
        return count
    }
    _ = try await records.count()
    var sum = 0
    for _ in 0..<count {
        if mode == "update" {
            let tag = "tag-\(sum)"
            sum &+= try await records.update(where: #Predicate { $0.priority >= 0 }) { $0.tag = tag }
        } else if mode == "range" {
            let records = try await records.fetch(where: #Predicate { (4000..<5000).contains($0.priority) }).collect()
            sum &+= records.count
        } else if mode == "point" {
            for id in Int64(1)...Int64(n) {
                sum &+= try await records.first(where: #Predicate { $0.id == id })!.priority
            }
        } else if mode == "commit" {
            // Single-record durable commits: each a `persist` of a changed record outside a
            // transaction (folio-bench's update-individual); `count` is the number of commits.
            for id in Int64(1)...Int64(count) {
                var record = CrudRecord.make(id: id, n: n)
                record.tag = "tag-commit"
                try await records.persist(record)
                sum &+= 1
            }
            break
        } else if mode == "first" {
            // A fresh process's first writes (folio-bench's mp-first-write-beside-idle): each
            // of the `count` single-record commits timed, in microseconds, on standard error.
            for id in Int64(1)...Int64(count) {
                var record = CrudRecord.make(id: id, n: n)
                record.tag = "tag-first"
                let start = DispatchTime.now().uptimeNanoseconds
                try await records.persist(record)
                let micros = (DispatchTime.now().uptimeNanoseconds - start) / 1000
                FileHandle.standardError.write(Data("commit \(id): \(micros) µs\n".utf8))
                sum &+= 1
            }
            break
        } else if mode == "icommit" {
            // As `commit`, but each update also changes the indexed priority
            // (folio-bench's update-indexed-individual).
            for id in Int64(1)...Int64(count) {
                var record = CrudRecord.make(id: id, n: n)
                record.priority = (record.priority + 37) % n
                try await records.persist(record)
                sum &+= 1
            }
            break
        } else if mode == "sorted" {
            let sorted = try await records.fetch(
                where: #Predicate<CrudRecord> { $0.priority >= 9_000 },
                sortBy: [SortDescriptor(\CrudRecord.title, comparator: .lexical)], limit: 20
            ).collect()
            sum &+= sorted.count
        } else if mode == "scan" {
            for try await record in records.load(...) where record.color == 1 { sum &+= record.priority }
        } else {
            for id in 1...n { sum &+= try await records.load(Int64(id))!.priority }
        }
    }
    try await persistence.close()
    return sum
}

let done = DispatchSemaphore(value: 0)
nonisolated(unsafe) var result = 0
Task.detached {
    do { result = try await run() } catch { print("error: \(error)"); exit(1) }
    done.signal()
}
done.wait()
print(result)
exit(0)
