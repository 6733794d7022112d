import Testing
import FolioStorage
import FolioTestSupport

/// The anchor lag bound (Docs/Durability.md §1.5): the durable root slot is never more than
/// `RootSlots.maximumAnchorLag` (64) generations behind the newest slot written, whatever
/// number of commits one slot write covers. After a power cut that loses every unsynced
/// slot write, a reader opens at most 64 generations back (until a writer recovers the
/// runs), and a damaged run can cut off at most that many commits.
@Suite struct AnchorLagTests {
    static let bound: UInt64 = 64

    /// Ten commits per slot write, 30 times: grouped flushes, or group commit (ten commits
    /// appended before the first one's wait). After each, a power cut that keeps only what
    /// was synced: a reader opening that image sees a generation within the bound.
    @Test(arguments: [false, true])
    func theAnchorNeverLagsMoreThanTheBound(grouped: Bool) throws {
        let power = PowerLossFileSystem()
        try power.createDirectory("/stores")
        try power.syncDirectory("/")
        let durability: Durability = grouped ? .grouped(window: .seconds(3600)) : .full
        let store = try Store.open(at: "/stores/s", options: testOptions(power, durability: durability))
        defer { store.close() }
        var worst: UInt64 = 0
        for round in 0..<30 {
            var appended: [AppendedCommit] = []
            for i in 0..<10 {
                let transaction = try store.beginWrite()
                try transaction.put([UInt8(i)], for: [UInt8(round), UInt8(i)], in: "t")
                appended.append(try transaction.commitAppending())
            }
            if grouped {
                try store.flush()
            } else {
                try appended.last!.waitUntilDurable()
                for commit in appended.dropLast() { try commit.waitUntilDurable() }
            }
            let image = power.crashImage(mode: .durableOnly)
            let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(image))
            let lag = store.generation - reader.generation
            reader.close()
            worst = max(worst, lag)
            #expect(lag <= Self.bound, "round \(round): a reader after a power cut opens \(lag) generations back")
        }
        #expect(worst > 0, "the slots did lag: the bound was exercised")
    }
}
