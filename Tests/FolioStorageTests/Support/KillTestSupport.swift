import Foundation
import Testing
import FolioStorage
import FolioTestSupport

/// Tier B (crash tests with real processes) runs a short version in every `swift test`, so
/// CI exercises it, and the long one with `FOLIO_CRASH_TESTS=1` (Docs/Durability.md §8).
enum CrashTestMode {
    static var isLong: Bool { ProcessInfo.processInfo.environment["FOLIO_CRASH_TESTS"] == "1" }

    /// `short` normally, `long` under `FOLIO_CRASH_TESTS=1`.
    static func pick<T>(short: T, long: T) -> T { isLong ? long : short }
}

/// What one `folio-torture transfers` run printed (see its Transfers.swift).
struct TransferTranscript {
    /// `open C G`: the state the child opened at, after recovery.
    var opened: Recovered?
    /// The highest transaction number printed in an `ack` line, and its generation.
    var acknowledged = 0
    var acknowledgedGeneration: UInt64 = 0
    /// The highest transaction number printed in an `attempt` line.
    var attempted = 0
    /// `compacted G` lines: compactions that completed.
    var compactions = 0
    /// `done C G`: the child finished cleanly.
    var done: Recovered?

    init(_ lines: [String]) {
        for line in lines {
            let parts = line.split(separator: " ")
            func number(_ index: Int) -> Int? { parts.count > index ? Int(parts[index]) : nil }
            func generation(_ index: Int) -> UInt64? { parts.count > index ? UInt64(parts[index]) : nil }
            switch parts.first {
            case "open": if let c = number(1), let g = generation(2) { opened = Recovered(count: c, generation: g) }
            case "attempt": attempted = max(attempted, number(1) ?? 0)
            case "ack":
                if let n = number(1), n > acknowledged { acknowledged = n }
                acknowledgedGeneration = max(acknowledgedGeneration, generation(2) ?? 0)
            case "compacted": compactions += 1
            case "done": if let c = number(1), let g = generation(2) { done = Recovered(count: c, generation: g) }
            default: break
            }
        }
    }
}

/// The parent's side of a chain of kills on one store: what every child so far was told,
/// and the D1-D4 checks after each death.
struct KillChain {
    let path: String
    let workload: TransferWorkload
    /// What the parent may rely on: acknowledged transactions and generations so far.
    var bounds = Acknowledged()
    /// The newest generation anyone (child or parent) has seen the store at.
    var seenGeneration: UInt64 = 0
    var kills = 0
    var cleanExits = 0

    init(path: String, workload: TransferWorkload) {
        self.path = path
        self.workload = workload
    }

    /// Folds in what a child printed before it died (or finished), checks its own open
    /// against what came before (D4: it opened unaided, nothing acknowledged lost, the
    /// generation not behind), then checks the store as the child left it: read-only, so
    /// that nothing is repaired before looking (D1-D3), and `verify`.
    mutating func childEnded(_ transcript: TransferTranscript, context: String) {
        if let opened = transcript.opened {
            #expect(
                opened.count >= bounds.acknowledged && opened.count <= bounds.attempted,
                "\(context): the child opened holding \(opened.count), \(bounds)")
            #expect(
                opened.generation >= seenGeneration,
                "\(context): the child opened at \(opened.generation) after \(seenGeneration) was seen")
            seenGeneration = max(seenGeneration, opened.generation)
        }
        bounds.attempted = max(bounds.attempted, transcript.attempted, transcript.opened?.count ?? 0)
        bounds.acknowledged = max(bounds.acknowledged, transcript.acknowledged, transcript.done?.count ?? 0)
        bounds.generation = max(bounds.generation, transcript.acknowledgedGeneration, transcript.done?.generation ?? 0)
        let reader: Store
        do {
            reader = try Store.openReadOnly(at: path, options: testOptions())
        } catch StorageError.storeNotFound {
            // Killed before the store's creation completed: fine only if nothing was acknowledged.
            #expect(bounds.acknowledged == 0 && bounds.generation == 0, "\(context): the store is gone, \(bounds)")
            return
        } catch {
            Issue.record("\(context): the store does not open: \(error)")
            return
        }
        defer { reader.close() }
        do {
            let count = try workload.check(reader.read())
            #expect(count >= bounds.acknowledged, "D1: \(context): holds \(count), \(bounds)")
            #expect(count <= bounds.attempted, "D2: \(context): holds \(count), \(bounds)")
            #expect(
                reader.generation >= bounds.generation && reader.generation >= seenGeneration,
                "D4: \(context): generation \(reader.generation), \(bounds), seen \(seenGeneration)")
            seenGeneration = max(seenGeneration, reader.generation)
            // What the store holds now is what the next child must find, at least. It may
            // find more, up to what was attempted: a read-only open takes the root slots
            // only, and the next writer's recovery also follows the complete runs a killed
            // writer left after its last slot (format version 2, Docs/Durability.md §3).
            bounds.acknowledged = count
        } catch {
            Issue.record("D2/D3: \(context): \(error)")
        }
        let report = reader.verify()
        #expect(report.isClean, "D3: \(context): \(report.problems.prefix(3))")
    }
}
