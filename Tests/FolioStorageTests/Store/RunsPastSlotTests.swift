import Testing
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// What lies past the newest root slot (Docs/Durability.md §1.5): complete runs that a
/// writer's open recovers (verify on a read-only store notes them: pending recovery), and
/// a damaged run that cuts off the complete runs after it (verify reports it as a problem
/// naming the generations lost; the writer's open logs the same).
@Suite struct RunsPastSlotTests {
    /// A store whose root file is put back to before its last four commits, as a writer
    /// killed before its slot writes or a power cut before the root sync leaves it. Returns
    /// the slot's generation and the commit locations of the four commits past it.
    func storeWithRunsPastTheSlot(_ memory: MemoryFileSystem) throws -> (slot: UInt64, commits: [CommitLocation]) {
        let store = try Store.open(at: "/stores/s", options: testOptions(memory))
        for i in 0..<3 { try store.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        let rootBefore = memory.contents(of: "/stores/s/root")!
        let slot = store.generation
        var commits: [CommitLocation] = []
        for i in 3..<7 {
            try store.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") }
            commits.append(store.currentCommit)
        }
        store.close()
        memory.setContents(rootBefore, of: "/stores/s/root")
        return (slot, commits)
    }

    func flipByte(at offset: UInt64, of path: String, in memory: MemoryFileSystem) {
        var bytes = memory.contents(of: path)!
        bytes[Int(offset)] ^= 0x5A
        memory.setContents(bytes, of: path)
    }

    @Test func verifyNotesCompleteRunsPastTheSlot() throws {
        let memory = try memoryFileSystem()
        let (slot, _) = try storeWithRunsPastTheSlot(memory)
        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(memory))
        #expect(reader.generation == slot)
        let report = reader.verify()
        reader.close()
        #expect(report.isClean, "pending recovery is not a problem: \(report.problems)")
        #expect(report.notes.count == 1)
        #expect(report.notes.first?.detail.contains("generations \(slot + 1)-\(slot + 4)") == true, "\(report.notes)")
        // A writer's open adopts them; then there is nothing to note.
        let writer = try Store.open(at: "/stores/s", options: testOptions(memory))
        #expect(writer.generation == slot + 4)
        #expect(writer.verify().notes.isEmpty)
        writer.close()
        let after = try Store.openReadOnly(at: "/stores/s", options: testOptions(memory))
        defer { after.close() }
        #expect(after.verify().notes.isEmpty)
        #expect(after.verify().isClean)
    }

    /// A byte flipped in a page (not the commit page) of the second run past the slot.
    @Test func aDamagedRunIsReportedWithTheGenerationsItCutsOff() throws {
        let memory = try memoryFileSystem()
        let (slot, commits) = try storeWithRunsPastTheSlot(memory)
        let file = "/stores/s/snapshots/0000000000000001.folio"
        // The second run starts where the first commit page ends; its first page is a leaf.
        flipByte(at: commits[0].address.end + 30, of: file, in: memory)
        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(memory))
        let report = reader.verify()
        reader.close()
        #expect(
            report.notes.count == 1 && report.notes[0].detail.contains("generation \(slot + 1) lie"), "\(report.notes)")
        #expect(report.problems.count == 1, "\(report.problems)")
        let problem = try #require(report.problems.first)
        #expect(problem.offset == commits[0].address.end)
        #expect(problem.detail.contains("the run of generation \(slot + 2) "), "\(problem)")
        #expect(problem.detail.contains("generations \(slot + 3)-\(slot + 4)"), "\(problem)")
        #expect(problem.detail.contains("recovery stops at generation \(slot + 1)"), "\(problem)")

        // The writer's open stops there, as said, and logs it.
        let messages = Mutex<[String]>([])
        let writer = try Store.open(
            at: "/stores/s", options: testOptions(memory, log: { line in messages.withLock { $0.append(line) } }))
        defer { writer.close() }
        #expect(writer.generation == slot + 1)
        #expect(
            messages.withLock {
                $0.contains { $0.contains("the run of generation \(slot + 2) ") && $0.contains("are lost") }
            },
            "\(messages.withLock { $0 })")
    }

    /// The damaged page is the run's commit page: the next commit page names it as its
    /// previous, which places the damage in the chain.
    @Test func aDamagedCommitPageIsFoundThroughTheNextCommit() throws {
        let memory = try memoryFileSystem()
        let (slot, commits) = try storeWithRunsPastTheSlot(memory)
        flipByte(at: commits[1].address.offset + 30, of: "/stores/s/snapshots/0000000000000001.folio", in: memory)
        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(memory))
        defer { reader.close() }
        let report = reader.verify()
        #expect(report.problems.count == 1, "\(report.problems)")
        #expect(report.problems.first?.offset == commits[1].address.offset)
        #expect(
            report.problems.first?.detail.contains("generations \(slot + 3)-\(slot + 4)") == true, "\(report.problems)")
    }

    /// A damaged last run with nothing after it is what a power cut leaves of an unsynced
    /// commit: recovery stops before it, nothing after it is lost, and it is not a problem.
    @Test func aDamagedLastRunIsNotAProblem() throws {
        let memory = try memoryFileSystem()
        let (slot, commits) = try storeWithRunsPastTheSlot(memory)
        flipByte(at: commits[2].address.end + 30, of: "/stores/s/snapshots/0000000000000001.folio", in: memory)
        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(memory))
        defer { reader.close() }
        let report = reader.verify()
        #expect(report.isClean, "\(report.problems)")
        #expect(report.notes.first?.detail.contains("generations \(slot + 1)-\(slot + 3)") == true, "\(report.notes)")
    }
}
