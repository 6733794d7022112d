import Foundation
import FolioStorage

// compaction-pause: the longest commit pause while an automatic compaction of a large store
// runs. Builds a store of about `--mib` MiB of live data (1,000-byte values, transactions
// of 1,000), reopens it with automatic compaction set to cross after a few hundred
// single-record commits, then times single-record durable commits (one writer, random keys)
// until the compaction has switched files and `--after` more commits have run. Reports
// the commit latencies before the crossing (baseline) and from the crossing commit until
// the compaction was seen done (during), as p50, p99 and max, and the compaction's span.
//
// Usage: compaction-pause DIR [--mib 100] [--after 200] [--grouped]
// DIR must not exist (it is created and removed).

struct Options {
    var directory = ""
    var mebibytes = 100
    var after = 200
    var grouped = false
}

func parse() -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst().makeIterator()
    while let argument = arguments.next() {
        switch argument {
        case "--mib": options.mebibytes = Int(arguments.next() ?? "") ?? options.mebibytes
        case "--after": options.after = Int(arguments.next() ?? "") ?? options.after
        case "--grouped": options.grouped = true
        default: options.directory = argument
        }
    }
    if options.directory.isEmpty {
        FileHandle.standardError.write(Data("usage: compaction-pause DIR [--mib 100] [--after 200] [--grouped]\n".utf8))
        exit(2)
    }
    return options
}

func key(_ index: Int) -> [UInt8] {
    withUnsafeBytes(of: UInt64(index).bigEndian) { Array($0) }
}

func value(_ index: Int, round: Int) -> [UInt8] {
    var state = UInt64(truncatingIfNeeded: index &* 31 &+ round) &* 0x9E37_79B9_7F4A_7C15
    return (0..<1000).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 56)
    }
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func summary(_ name: String, _ nanoseconds: [UInt64]) -> String {
    guard !nanoseconds.isEmpty else { return "\(name): no commits" }
    let sorted = nanoseconds.sorted()
    func ms(_ value: UInt64) -> String { String(format: "%.3f ms", Double(value) / 1e6) }
    let p99 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
    return
        "\(name): \(sorted.count) commits, p50 \(ms(sorted[sorted.count / 2])), p99 \(ms(p99)), max \(ms(sorted.last!))"
}

let options = parse()
let durability: Durability = options.grouped ? .grouped : .full
let count = options.mebibytes * 1024 * 1024 / 1000
let quiet: @Sendable (String) -> Void = { _ in }
do {
    // Build, with automatic compaction off.
    let build = try Store.open(
        at: options.directory,
        options: StoreOptions(durability: .grouped, autoCompaction: nil, log: quiet))
    var start = 0
    while start < count {
        let end = min(count, start + 1000)
        try build.write { transaction in
            for index in start..<end { _ = try transaction.put(value(index, round: 0), for: key(index), in: "t") }
        }
        start = end
    }
    build.close()
    // Compact once by hand, so that the dead bytes start near zero.
    let settle = try Store.open(at: options.directory, options: StoreOptions(autoCompaction: nil, log: quiet))
    try settle.compact()
    let settled = try settle.statistics()
    settle.close()
    // Reopened with a bound the writer's commits cross after a few hundred commits.
    let slack = settled.deadBytes + (4 << 20)
    let store = try Store.open(
        at: options.directory,
        options: StoreOptions(
            durability: durability,
            autoCompaction: AutoCompaction(slackBytes: slack, deadToLiveRatio: 0),
            retention: SnapshotRetention(gracePeriod: .zero), log: quiet))
    print(
        "store: \(count) records, live \(settled.liveBytes >> 20) MiB, file \(settled.currentFileBytes >> 20) MiB, "
            + "durability \(options.grouped ? "grouped" : "full")")
    var random = SystemRandomNumberGenerator()
    var baseline: [UInt64] = []
    var during: [UInt64] = []
    var compactionStart: UInt64?
    var compactionEnd: UInt64?
    var afterCount = 0
    var round = 1
    // Crossing: the commit after which the dead bytes pass the bound (the compaction runs in
    // it, or starts after it) or drop (it already ran). Done: the dead bytes fell back
    // below half the bound. Statistics are read between commits, outside the timed span.
    while afterCount < options.after {
        let index = Int.random(in: 0..<count, using: &random)
        let deadBefore = try store.statistics().deadBytes
        let began = now()
        try store.write { transaction in _ = try transaction.put(value(index, round: round), for: key(index), in: "t") }
        let took = now() - began
        round += 1
        let deadAfter = try store.statistics().deadBytes
        if compactionStart == nil && (deadAfter > slack || deadAfter < deadBefore) { compactionStart = began }
        if compactionStart == nil {
            baseline.append(took)
        } else if compactionEnd == nil {
            during.append(took)
            if deadAfter < slack / 2 { compactionEnd = now() }
        } else {
            afterCount += 1
        }
    }
    store.close()
    print(summary("baseline (before the crossing commit)", baseline))
    print(summary("during compaction (crossing commit to switch)", during))
    if let compactionStart, let compactionEnd {
        print(
            String(format: "compaction span seen by the writer: %.3f s", Double(compactionEnd - compactionStart) / 1e9))
    }
    try? FileManager.default.removeItem(atPath: options.directory)
} catch {
    FileHandle.standardError.write(Data("compaction-pause: \(error)\n".utf8))
    try? FileManager.default.removeItem(atPath: options.directory)
    exit(1)
}
