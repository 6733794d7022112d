import Foundation
import Testing
import FolioStorage
import FolioTestSupport

/// Docs/Architecture.md invariant 5: a transaction of any size runs in bounded memory. A
/// child process (`folio-torture big-transaction`) puts N keys in one transaction with a
/// 1 MiB spill budget and the change log capped at 4,096 keys, and reports its resident
/// memory before the transaction and its own peak (`VmHWM`) after the commit; what the
/// transaction added must stay within a bound that does not grow with N (the spill budget,
/// the change log's cap, the page cache, malloc's slack). Default N = 100,000 (about 11 MiB
/// of keys and values, a few seconds): it adds about 4 MiB (5 MiB at 300,000), 54 MiB when
/// the engine ignores the spill budget, 15 MiB when it ignores the change log's cap.
/// `FOLIO_STRESS_TESTS=1` runs 3,000,000.
@Suite struct TransactionMemoryTests {
    static var count: Int { ProcessInfo.processInfo.environment["FOLIO_STRESS_TESTS"] == "1" ? 3_000_000 : 100_000 }

    /// What the transaction may add at its peak: 1 MiB of spill budget, the change log capped
    /// at twice 4,096 keys, a 1 MiB page cache, the spill's and the commit's write buffers
    /// and malloc's slack, at any N.
    static let bound = 8 << 20

    @Test func aLargeTransactionsPeakMemoryDoesNotGrowWithItsSize() async throws {
        #if os(Linux)
        let growth = try await Self.childGrowth(count: Self.count)
        #expect(growth < Self.bound, "the transaction added \(growth >> 20) MiB at its peak")
        #endif
    }

    /// The child's peak is its own: inside the whole suite the test process has held
    /// hundreds of MiB by the time it launches the child, and `getrusage`'s `ru_maxrss`
    /// carries the launching process's peak across `execve`. Here the test process takes
    /// 64 MiB more first, as the suite would, and a 1,000-key transaction must still report
    /// a growth within the bound.
    @Test func theChildsPeakIsNotTheLaunchingProcesss() async throws {
        #if os(Linux)
        let ballast = [UInt8](repeating: 1, count: 64 << 20)
        let growth = try await Self.childGrowth(count: 1_000)
        withExtendedLifetime(ballast) {}
        #expect(growth < Self.bound, "a 1,000-key transaction added \(growth >> 20) MiB at its peak")
        #endif
    }

    /// Runs the child with `count` keys; returns its peak minus its resident bytes before the
    /// transaction.
    private static func childGrowth(count: Int) async throws -> Int {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let child = try ChildProcess(
            try ProjectExecutable.path("folio-torture"),
            ["big-transaction", directory.child("store"), "\(count)", "\(1 << 20)", "4096"])
        #expect(try await child.waitUntilExit(timeout: 600) == 0, "child failed: \(child.errorOutput)")
        func field(_ name: String) throws -> Int {
            let line = try #require(child.output.first { $0.hasPrefix(name + " ") }, "no \(name) line")
            return try #require(Int(line.dropFirst(name.count + 1)))
        }
        #expect(try field("count") == count)
        return try field("peak") - field("rss")
    }
}
