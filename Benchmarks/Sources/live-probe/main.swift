import Foundation
import Folio

// live-probe: the observe suite's case 3 on its own (1,000 live range queries of 1,000
// records each, all 10,000 records rotated in one commit), for perf or callgrind. A
// synchronous main that waits for one task (valgrind 3.19 does not survive folio-bench's
// async main). Usage:
//   live-probe index|predicate [DIR]
// Prints when the commit returned and when the last query delivered. With FOLIO_PERF_CTL
// set to the path of perf's control FIFO (`perf record -D -1 --control fifo:CTL`), profiling
// is enabled from just before the commit until the last delivery only.

/// folio-bench's crud record (Crud/CrudRecord.swift): the fields and sizes that matter here.
struct CrudRecord: Codable, Sendable, Equatable, Identifiable {
    var id: Int64
    var title: String
    var color: Int
    var tag: String
    var priority: Int
    var text: String
}

/// folio-bench's crud format: an index on priority.
struct CrudRecordFormat: DatastoreFormat {
    enum Version: Int, CaseIterable, Sendable { case one = 1 }
    static let key = "records"
    static let currentVersion = Version.one
    typealias Instance = CrudRecord
    let priority = Index(\CrudRecord.priority)
    init() {}
}

let arguments = CommandLine.arguments
let predicate = arguments.count > 1 && arguments[1] == "predicate"
let directory =
    arguments.count > 2
    ? arguments[2] : NSTemporaryDirectory() + "live-probe-\(ProcessInfo.processInfo.processIdentifier)"
let n = 10_000, subscribers = 1_000, width = 1_000

/// Writes `command` to perf's control FIFO, if one was given.
func perfControl(_ command: String) {
    guard let path = ProcessInfo.processInfo.environment["FOLIO_PERF_CTL"],
        let handle = FileHandle(forWritingAtPath: path)
    else { return }
    handle.write(Data((command + "\n").utf8))
    try? handle.close()
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func run() async throws -> Int {
    try? FileManager.default.removeItem(atPath: directory)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    // Priorities: a permutation of 0..<n, so each window of `width` holds `width` records.
    var permutation = Array(0..<n)
    var state: UInt64 = 23
    for i in stride(from: n - 1, to: 0, by: -1) {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        permutation.swapAt(i, Int((state >> 33) % UInt64(i + 1)))
    }
    let text = String(repeating: "alpha bravo charlie ", count: 5)
    let records = (1...n).map {
        CrudRecord(
            id: Int64($0), title: "title-\($0)", color: $0 % 3, tag: "tag-\($0 % 100)",
            priority: permutation[$0 - 1], text: text)
    }
    let rotated = records.map {
        var record = $0
        record.title = "updated-\(record.id)"
        record.tag = "tag-updated"
        record.priority = (record.priority + n / 2) % n
        return record
    }
    let persistence = try Persistence(at: directory, options: PersistenceOptions(durability: .full, recordCache: nil))
    let datastore = persistence.datastore(for: CrudRecordFormat.self)
    try await persistence.perform { for record in records { try await datastore.persist(record) } }

    let ready = AsyncStream<Void>.makeStream()
    let arrived = AsyncStream<UInt64>.makeStream()
    for q in 0..<subscribers {
        let low = q * (n - width) / (subscribers - 1), high = low + width
        Task {
            var initial = true
            if predicate {
                for try await results in try await datastore.liveQuery(
                    where: #Predicate { (low..<high).contains($0.priority) }, sortBy: [SortDescriptor(\.priority)])
                {
                    if initial {
                        initial = false
                        ready.continuation.yield()
                    } else if results.first?.tag == "tag-updated" {
                        arrived.continuation.yield(now())
                        return
                    }
                }
            } else {
                for try await results in try await datastore.liveQuery(low..<high, from: \.priority) {
                    if initial {
                        initial = false
                        ready.continuation.yield()
                    } else if results.first?.tag == "tag-updated" {
                        arrived.continuation.yield(now())
                        return
                    }
                }
            }
        }
    }
    var waiting = subscribers
    for await _ in ready.stream {
        waiting -= 1
        if waiting == 0 { break }
    }
    perfControl("enable")
    let start = now()
    try await persistence.perform { for record in rotated { try await datastore.persist(record) } }
    let returned = now()
    var last: UInt64 = 0
    waiting = subscribers
    for await time in arrived.stream {
        last = max(last, time)
        waiting -= 1
        if waiting == 0 { break }
    }
    perfControl("disable")
    print(
        "\(predicate ? "predicate" : "index"): commit returned after \(Double(returned - start) / 1e6) ms;"
            + " last delivery \(Double(last - returned) / 1e6) ms after that; total \(Double(last - start) / 1e6) ms")
    persistence.close()
    return subscribers
}

let done = DispatchSemaphore(value: 0)
Task.detached {
    do { _ = try await run() } catch {
        print("error: \(error)")
        exit(1)
    }
    done.signal()
}
done.wait()
exit(0)
