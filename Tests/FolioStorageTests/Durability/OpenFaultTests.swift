import Testing
import FolioStorage
import FolioTestSupport

/// An I/O error while opening is an I/O error, not damage: the open fails with it and a
/// second attempt opens at the newest generation. It must never fall back to root slot 1,
/// which for a writer means truncating away the acknowledged generation slot 0 names
/// (Docs/Durability.md §7).
@Suite struct OpenFaultTests {
    /// Every call of a writer's and a reader's open failed once (EIO, then ENOSPC): the
    /// open throws a typed I/O error or succeeds, and whenever it succeeds, now or on the
    /// retry, it is at the newest generation with every transaction.
    @Test(arguments: [FaultPlan.Kind.io, .noSpace], [false, true])
    func transientErrorsWhileOpeningNeverFallBack(kind: FaultPlan.Kind, readOnly: Bool) throws {
        let workload = TransferWorkload(seed: 5, accounts: 10)
        let memory = try memoryFileSystem()
        let driver = TransferDriver(workload)
        let store = try driver.open(options: testOptions(memory))
        for _ in 0..<4 { try driver.commitNext(store) }
        let generation = store.generation
        store.close()

        func open(_ fileSystem: any FileSystem) throws(StorageError) -> Store {
            readOnly
                ? try Store.openReadOnly(at: "/stores/s", options: testOptions(fileSystem))
                : try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        }
        let counting = FaultInjectingFileSystem(wrapping: memory)
        try open(counting).close()
        var failed = 0
        for call in 1...counting.callCount {
            let faulty = FaultInjectingFileSystem(wrapping: memory, plan: FaultPlan(failingCall: call, kind: kind))
            let opened: Store
            do {
                opened = try open(faulty)
            } catch {
                guard case .io = error else {
                    Issue.record("call \(call): \(error) is not an I/O error")
                    continue
                }
                failed += 1
                opened = try open(faulty)  // the fault was transient: this works
            }
            #expect(
                opened.generation == generation,
                "call \(call) failed: opened at \(opened.generation), not \(generation)")
            #expect(try workload.check(opened.read()) == 4, "call \(call)")
            #expect(opened.verify().isClean)
            opened.close()
        }
        #expect(failed > 0)
    }
}
