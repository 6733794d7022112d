import Foundation
import FolioStorage

// The `folio` command-line tool. Until the Folio API lands, `demo` exercises the storage
// engine directly: it creates a store, writes and queries keys, compacts, verifies.

func engineDemo(directory: String?) throws {
    let path = directory ?? (FileManager.default.temporaryDirectory.path + "/folio-demo-\(UUID().uuidString.prefix(8))")
    let clock = ContinuousClock()
    func elapsed(_ start: ContinuousClock.Instant) -> String {
        let d = clock.now - start
        return String(format: "%.1f ms", Double(d.components.attoseconds) / 1e15 + Double(d.components.seconds) * 1000)
    }
    print("Folio demo (storage engine) in \(path)")
    let store = try Store.open(at: path)
    var start = clock.now
    try store.write { txn in
        for i in 0..<5_000 {
            try txn.put(Array("book \(i)".utf8), for: Array(String(format: "isbn-%08d", i).utf8), in: "books")
        }
    }
    print("  wrote 5,000 keys in one transaction: \(elapsed(start))")
    start = clock.now
    for i in 0..<500 {
        try store.write { txn in
            try txn.put(Array("book \(i) (2nd edition)".utf8), for: Array(String(format: "isbn-%08d", i).utf8), in: "books")
        }
    }
    print("  500 single-key durable commits: \(elapsed(start))")
    start = clock.now
    let view = try store.read()
    var cursor = try view.cursor(in: "books", range: KeyRange(lower: .included(Array("isbn-00001000".utf8)),
                                                                upper: .excluded(Array("isbn-00001100".utf8))))
    var count = 0
    while try cursor.next() != nil { count += 1 }
    print("  range query isbn-00001000..<isbn-00001100: \(count) keys in \(elapsed(start))")
    let before = try store.statistics()
    start = clock.now
    let report = try store.compact()
    print("  compaction: \(report.bytesBefore) → \(report.bytesAfter) bytes in \(elapsed(start)) (dead before: \(before.deadBytes))")
    let verification = store.verify()
    print("  verify: \(verification.isClean ? "clean" : "\(verification.problems.count) problems"), \(verification.pagesChecked) pages checked")
    let stats = try store.statistics()
    print("  generation \(stats.generation), live \(stats.liveBytes) bytes, dead \(stats.deadBytes) bytes, \(stats.fileCount) snapshot file(s)")
    store.close()
    print("Store left at \(path)")
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "demo":
        try engineDemo(directory: arguments.count > 1 ? arguments[1] : nil)
    default:
        print("usage: folio demo [DIR]")
        exit(arguments.isEmpty ? 0 : 64)
    }
} catch {
    FileHandle.standardError.write(Data("folio: \(error)\n".utf8))
    exit(1)
}
