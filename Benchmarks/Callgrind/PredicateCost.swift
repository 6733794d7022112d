// The per-record cost of a query-scan's two steps, for callgrind: decoding a record's JSON
// (Folio's decoder, called generically as the `Folio` module calls it) and checking
// `#Predicate { $0.color == c }` on it, through Foundation's `evaluate` or through
// `CompiledPredicate`. Each mode does the same setup (10,000 records encoded) and then its
// loop over them; subtract the `setup` mode's instruction count and divide by the count
// (the compiled mode includes compiling once: see the compile modes).
// Built and run by predicate-cost.sh.
import Foundation
@testable import Probe

struct CrudRecord: Codable, Sendable {
    var id: Int64
    var title: String
    var color: Int
    var tag: String
    var priority: Int
    var text: String
}

let count = 10_000
let mode = CommandLine.arguments.dropFirst().first ?? "setup"
let records = (0..<count).map { id in
    CrudRecord(
        id: Int64(id), title: "title-\(id)", color: id % 3, tag: "tag-\(id % 100)", priority: (id * 7919) % count,
        text: String(repeating: "alpha bravo charlie delta ", count: 4))
}
let encoder = FolioJSONEncoder()
let payloads = try records.map { try encoder.encode($0) }
let color = 1
let predicate = #Predicate<CrudRecord> { $0.color == color }
var matches = 0

switch mode {
case "decode":
    let decoder = FolioJSONDecoder()
    for payload in payloads where try decoder.decode(CrudRecord.self, from: payload).color == color { matches += 1 }
case "foundation":
    for record in records where try predicate.evaluate(record) { matches += 1 }
case "compiled":
    let compiled = CompiledPredicate(predicate)
    for record in records where try compiled.evaluate(record) { matches += 1 }
case "compile-once":
    matches = CompiledPredicate(predicate).foundationSubtrees
case "compile-101":
    // The first compilation of a shape pays the runtime's conformance lookups; the others
    // are what a repeated query costs.
    for _ in 0...100 { matches += CompiledPredicate(predicate).foundationSubtrees }
case "swift":
    for record in records where record.color == color { matches += 1 }
default:
    break
}
print(mode, matches)
