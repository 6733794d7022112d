import Testing
import FolioTestSupport

/// What a `folio-torture folio-observer` process printed (Sources/folio-torture/FolioObserver.swift),
/// checked against the store the writers left.
struct FolioObserverTranscript {
    /// Commits it was told of, reloads announced, snapshots it read.
    var commits = 0
    var reloads = 0
    var snapshots = 0

    /// Checks the lines: after "start T G", every "tx" is the commit after the one before
    /// (its total one more, its generation later), except that the first may be one the
    /// start's read already held and the first after "reload G T" one the re-read held;
    /// each commit it was told of is, in `final` (each writer's entries at the end), the
    /// transaction at that serial position; no commit was torn, no snapshot disagreed with
    /// itself, and "end T G" reached `finalTotal`, every commit up to it told or covered by
    /// a reload.
    init(_ lines: [String], final entries: [[WriterEntry]], finalTotal: Int, name: String) {
        var total: Int?
        var generation: UInt64 = 0
        // After "start" or "reload": the next commit may be one already reflected, up to this.
        var resumeBound: Int?
        var ended = false
        for line in lines {
            let parts = line.split(separator: " ").map(String.init)
            let numbers = parts.dropFirst().compactMap { Int($0) }
            switch (parts.first, numbers.count) {
            case ("start", 2) where total == nil:
                total = numbers[0]
                // Its read came after `observe()` began: the first commit told may be one
                // the read held, of a generation up to the start's.
                resumeBound = numbers[0] + 1
            case ("tx", 4) where total != nil && !ended:
                let (g, t, writer, n) = (UInt64(numbers[0]), numbers[1], numbers[2], numbers[3])
                #expect(g > generation, "\(name): generation \(g) after \(generation)")
                if let bound = resumeBound {
                    #expect(
                        t <= bound && t >= 1, "\(name): first commit after a start or reload at \(t), bound \(bound)")
                } else {
                    #expect(t == total! + 1, "\(name): told of total \(t) after \(total!): a gap")
                }
                let entry =
                    entries.indices.contains(writer) && entries[writer].indices.contains(n) ? entries[writer][n] : nil
                #expect(entry?.seq == t, "\(name): \(line), but the store has \(String(describing: entry))")
                resumeBound = nil
                total = t
                generation = g
                commits += 1
            case ("reload", 2) where total != nil && !ended:
                #expect(UInt64(numbers[0]) >= generation, "\(name): \(line) after generation \(generation)")
                generation = UInt64(numbers[0])
                resumeBound = numbers[1] + 1
                total = max(total!, numbers[1])
                reloads += 1
            case ("end", 3) where total != nil && !ended:
                #expect(numbers[0] == finalTotal, "\(name): ended at total \(numbers[0]), not \(finalTotal)")
                #expect(
                    total == finalTotal || resumeBound.map { finalTotal < $0 } == true,
                    "\(name): told up to total \(total!) of \(finalTotal)")
                snapshots = numbers[2]
                ended = true
            default:
                Issue.record("\(name): \(line)")
            }
        }
        #expect(ended, "\(name) printed no end: \(lines.suffix(3))")
        #expect(snapshots > 0, "\(name) read no snapshot")
    }
}
