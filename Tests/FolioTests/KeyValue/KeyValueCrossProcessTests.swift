import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport

/// The key-value store across processes: `folio-torture values STORE N` sets the key
/// "counter" to 1...N outside transactions, flushing after each, while this process, with a
/// read-only `Persistence(readingFrom:)`, observes the key and reads it.
@Suite(.serialized) struct KeyValueCrossProcessTests {
    @Test func aReadOnlyProcessObservesAnotherProcesssSetsInOrder() async throws {
        let path = KV.temporaryPath("xprocess")
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {  // Create the store, as the writer's first launch would.
            let writer = try Persistence(at: path, options: KV.options())
            writer.close()
        }
        let count = KV.isLong ? 1_000 : 100
        // What the reader's follower logs (a catch-up that failed says why here).
        let readerLog = Mutex<[String]>([])
        let reader = try Persistence(
            readingFrom: path, options: KV.options(log: { line in readerLog.withLock { $0.append(line) } }))
        defer { reader.close() }
        let counter = ValueKey<Int>("counter", default: 0)
        #expect(reader.values[counter] == 0)

        let seen = Mutex<[Int]>([])
        let failure = Mutex<String?>(nil)
        let observer = Task.detached {
            do {
                for try await value in reader.values.observe(counter) {
                    seen.withLock { $0.append(value) }
                    if value == count { break }
                }
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
        }
        // Where the reader is, for a wait's failure: its generation, the newest one in the
        // files (read by an engine-level open of its own), the last value observed, and the
        // end of the reader's log.
        let readerState: @Sendable () -> String = {
            let files =
                (try? Store.openReadOnly(at: path, options: StoreOptions(createIfMissing: false, log: { _ in })))
                .map { store in
                    defer { store.close() }
                    return "\(store.generation)"
                } ?? "unreadable"
            return "the reader is at generation \(reader.core.store.generation), the files at \(files); "
                + "the observer saw last \(String(describing: seen.withLock { $0.last })); "
                + "the reader's log ends \(readerLog.withLock { $0.suffix(5) })"
        }
        // The observer has its first value (the default) before the writer starts. (Generous:
        // the whole suite runs beside this test, on 2 cores.)
        #expect(await KV.eventually { !seen.withLock { $0 }.isEmpty }, "\(readerState())")
        // Meanwhile, plain reads in this process never go backwards.
        let stop = Atomic<Bool>(false)
        let reads = Task.detached { () -> [String] in
            var last = 0
            var backwards: [String] = []
            while !stop.load(ordering: .acquiring) {
                let value = reader.values[counter]
                if value < last, backwards.count < 5 { backwards.append("\(value) after \(last)") }
                last = max(last, value)
                try? await Task.sleep(for: .milliseconds(1))
            }
            return backwards
        }

        let child = try ChildProcess(try ProjectExecutable.path("folio-torture"), ["values", path, "\(count)"])
        #expect(try await child.waitUntilExit() == 0, "writer failed: \(child.errorOutput)")
        #expect(child.output.last == "done \(count)", "\(child.output)")

        let reachedEnd = await KV.eventually { seen.withLock { $0.last } == count }
        if !reachedEnd { observer.cancel() }
        _ = await observer.value
        #expect(reachedEnd, "the observer stopped: \(readerState())")
        #expect(failure.withLock { $0 } == nil, "\(String(describing: failure.withLock { $0 }))")
        let observed = seen.withLock { $0 }
        #expect(observed.first == 0)
        #expect(observed == observed.sorted(), "observed values went backwards: \(observed)")
        #expect(
            await KV.eventually { reader.values[counter] == count },
            "reader's value is \(reader.values[counter]): \(readerState())")
        stop.store(true, ordering: .releasing)
        let backwards = await reads.value
        #expect(backwards.isEmpty, "\(backwards)")
        #expect(try reader.values.keys() == ["counter"])
    }
}
