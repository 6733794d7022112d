import Testing
import Foundation
import FolioStorage

/// What `folio-torture concurrent-writers` leaves in a store, checked after a kill: thread
/// t's i-th commit puts key i (eight digits) into tree "w<t>", and every third one also adds
/// one to "total" in tree "shared" and logs itself in tree "log", in the same transaction.
enum ConcurrentWritersModel {
    /// Checks `view` for `threads` writer threads: each tree is a gap-free prefix holding
    /// every commit its thread had acknowledged, and the shared total equals the log (no
    /// lost update, no half transaction). Returns each thread's commit count.
    static func check(
        _ view: ReadView, threads: Range<Int>, acknowledged: [Int], context: String
    ) throws -> [Int] {
        var counts: [Int] = []
        for thread in threads {
            var expected = 0
            var cursor = try view.cursor(in: "w\(thread)")
            while let entry = try cursor.next() {
                #expect(
                    entry.key == Array(String(format: "%08d", expected).utf8), "\(context): thread \(thread) has a gap")
                expected += 1
            }
            #expect(expected > acknowledged[thread], "\(context): thread \(thread) lost acknowledged commits")
            counts.append(expected)
        }
        let total = try view.get(Array("total".utf8), in: "shared").flatMap { Int(String(decoding: $0, as: UTF8.self)) }
        let logged = Int(try view.count(in: "log"))
        #expect((total ?? 0) == logged, "\(context): the shared total lost an update (\(total ?? 0), log \(logged))")
        return counts
    }
}
