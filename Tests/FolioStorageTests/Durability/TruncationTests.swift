import Testing
@testable import FolioStorage
import FolioTestSupport

/// A5, truncation: a snapshot file cut at every 512-byte boundary below its committed
/// length (a lost tail, a copy cut short; the zeros preallocated past it do not count). Reading either returns exactly the committed
/// data (every page it needed lies before the cut) or fails with a corruption error naming
/// the file and the record that does not fit; `verify` always reports the short file; a
/// writer refuses to open it (recovery never "repairs" committed bytes away). Never a trap.
/// A root file cut short is reported the same way.
@Suite struct TruncationTests {
    @Test func snapshotFileCutAtEverySectorBoundary() throws {
        let fileSystem = try memoryFileSystem()
        let (store, file) = try storeWithEveryPageKind(fileSystem, keys: 500)
        let expected = try TreeModel(store.read())
        let pages = try probedPages(of: store)
        let committed = try store.read().root.record.committedLength
        store.close()
        let original = fileSystem.contents(of: file)!
        #expect(UInt64(original.count) >= committed)
        var cuts = 0, readable = 0
        for cut in stride(from: 0, to: Int(committed), by: 512) {
            fileSystem.setContents(Array(original[..<cut]), of: file)
            // A corruption error must name the file and a record that does not fit before the cut.
            let offsets = Set(pages.filter { $0.address.end > UInt64(cut) }.map(\.address.offset)).union([
                0, UInt64(cut),
            ])
            func expectReported(_ error: any Error, _ what: String) {
                guard case StorageError.corruption(let corruption) = error else {
                    Issue.record("cut at \(cut), \(what): \(error) is not a corruption error")
                    return
                }
                #expect(
                    corruption.file == file && offsets.contains(corruption.offset),
                    "cut at \(cut), \(what): \(corruption)")
            }
            do {
                let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(fileSystem, cache: 0))
                do {
                    #expect(try TreeModel(reader.read()) == expected, "cut at \(cut): different data returned")
                    readable += 1
                } catch {
                    expectReported(error, "reading")
                }
                let report = reader.verify()
                #expect(report.problems.contains { $0.file == file }, "cut at \(cut): verify found nothing")
                reader.close()
            } catch {
                expectReported(error, "opening for reading")
            }
            #expect(throws: StorageError.self, "cut at \(cut): a writer opened a truncated store") {
                do {
                    try Store.open(at: "/stores/s", options: testOptions(fileSystem)).close()
                } catch {
                    expectReported(error, "opening for writing")
                    throw error
                }
            }
            cuts += 1
        }
        fileSystem.setContents(original, of: file)
        #expect(cuts == (Int(committed) + 511) / 512)
        print(
            "durability A5: snapshot file (\(original.count) bytes) cut at \(cuts) sector boundaries, "
                + "\(readable) still readable in full (only unread pages lost), all reported")

        // The root file: empty, and cut inside slot 1: slot 0 opens, verify reports the rest.
        let root = fileSystem.contents(of: "/stores/s/root")!
        let slotZero = try RootRecord.decodeSlot(root, slot: 0, file: "root")
        fileSystem.setContents([], of: "/stores/s/root")
        #expect(throws: StorageError.self) { try Store.openReadOnly(at: "/stores/s", options: testOptions(fileSystem)) }
        fileSystem.setContents(Array(root[..<(RootRecord.slotStride + 64)]), of: "/stores/s/root")
        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(fileSystem))
        #expect(reader.generation == slotZero.generation)
        #expect(reader.verify().problems.contains { $0.file == "/stores/s/root" })
        reader.close()
        fileSystem.setContents(root, of: "/stores/s/root")
        let writer = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        #expect(writer.verify().isClean)
        writer.close()
    }
}
