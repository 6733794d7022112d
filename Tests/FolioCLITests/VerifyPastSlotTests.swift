import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage
import FolioTestSupport

/// `folio verify` looks past the newest root slot, as a writer's open would
/// (Docs/Durability.md §1.5): commits in complete runs there are a note, not a problem;
/// a damaged run that later complete runs chain to is a problem naming what is lost.
@Suite struct VerifyPastSlotTests {
    /// A store whose root file is put back to before its last three commits: their runs are
    /// complete past the slot, as a writer killed before its slot writes (or a power cut
    /// before the root file's sync) leaves them. Returns the store's path and the committed
    /// length the slot names (where the first run past it starts).
    func storeWithRunsPastTheSlot(in directory: TemporaryDirectory) async throws -> (path: String, slotEnd: UInt64) {
        let path = directory.child("library")
        let persistence = try Persistence(at: path, options: PersistenceOptions(autoCompaction: nil, log: { _ in }))
        let blobs = persistence.datastore(for: BlobFormat.self)
        try await blobs.persist(Blob(id: 1, text: "one"))
        let rootPath = path + "/root"
        let before = [UInt8](try Data(contentsOf: URL(fileURLWithPath: rootPath)))
        for id in 2...4 { try await blobs.persist(Blob(id: id, text: "blob \(id)")) }
        persistence.close()
        try Data(before).write(to: URL(fileURLWithPath: rootPath))
        // The newer slot's committed length (u64 at byte 32 of the slot; generation at 16).
        func field(_ slot: Int, _ offset: Int) -> UInt64 {
            before[(slot + offset)..<(slot + offset + 8)].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        let newest = field(4096, 16) > field(0, 16) ? 4096 : 0
        return (path, field(newest, 32))
    }

    @Test func pendingRecoveryIsANoteNotAProblem() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (path, _) = try await storeWithRunsPastTheSlot(in: directory)
        let run = try folio("verify", path)
        #expect(run.status == 0, "\(run)")
        let notes = run.lines.filter { $0.hasPrefix("note: pending recovery: generations ") }
        #expect(notes.count == 1, "\(run)")
        #expect(notes.first?.contains("a writer's next open adopts them") == true, "\(run)")
        #expect(!run.output.contains("problem:"))
        #expect(run.lines.last == "no problems found")
    }

    /// A byte flipped in the first run past the slot: the two complete runs after it chain
    /// to it, and a writer's open would stop before it and lose all three. Verify says so.
    @Test func aDamagedRunPastTheSlotIsAProblemNamingWhatIsLost() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (path, slotEnd) = try await storeWithRunsPastTheSlot(in: directory)
        let file = try currentSnapshot(of: path)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        bytes[Int(slotEnd) + 30] ^= 0x5A  // inside the first page of the run: past its 24-byte header
        try bytes.write(to: URL(fileURLWithPath: file))

        let run = try folio("verify", path)
        #expect(run.status == 1, "\(run)")
        let problems = run.lines.filter { $0.hasPrefix("problem: ") }
        #expect(problems.count == 1, "\(run)")
        #expect(problems.first?.contains("\(file) @\(slotEnd): the run of generation ") == true, "\(run)")
        #expect(problems.first?.contains("are lost") == true, "\(run)")
        #expect(!run.output.contains("note: pending recovery"), "no complete run lies before the damaged one: \(run)")
    }
}
