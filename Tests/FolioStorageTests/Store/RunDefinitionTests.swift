import Testing
@testable import FolioStorage
import FolioTestSupport

/// A complete run depends only on the bytes (Docs/Format.md §7 "A complete run"): the walk
/// looks at kinds, lengths, the first commit page and the run checksum, and a recovery
/// follows every complete run; nothing a reader may or may not check changes where it ends.
@Suite struct RunDefinitionTests {
    let path = "/stores/s"
    var snapshot: String { "\(path)/snapshots/0000000000000001.folio" }

    func reseal(_ bytes: inout [UInt8], pageAt offset: Int) {
        let length = Int(bytes.littleEndianUInt32(at: offset + 8))
        let crc = bytes.withUnsafeBytes {
            PageHeader.checksum($0[(offset + 4)..<(offset + length)], fileOffset: UInt64(offset))
        }
        withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange(offset..<(offset + 4), with: $0) }
    }

    /// A run whose first page carries another generation in its header (which no engine
    /// writes, and the verifier reports) is still a complete run when its commit page and
    /// run checksum match: recovery follows it, and does not stop at the odd page.
    @Test func aPageOfAnotherGenerationDoesNotEndTheWalk() throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        try write(sampleModel(count: 200, seed: 7), to: store)
        let slotted = fileSystem.contents(of: "\(path)/root")!
        let base = store.currentCommit
        try store.write { try $0.put(Array(repeating: 7, count: 300), for: [7], in: "later") }
        let last = store.currentCommit
        let generation = store.generation
        store.close()

        var bytes = fileSystem.contents(of: snapshot)!
        let start = Int(base.address.end)
        #expect(Int(last.address.offset) > start, "the run has pages before its commit page")
        // The run's first page says it was written by the generation before.
        withUnsafeBytes(of: (generation - 1).littleEndian) {
            bytes.replaceSubrange((start + 16)..<(start + 24), with: $0)
        }
        reseal(&bytes, pageAt: start)
        // Its commit page's run checksum over the changed bytes, seeded with the base's chain value.
        var crc = RunChecksum.seeded(with: bytes.littleEndianUInt32(at: Int(base.address.offset)))
        crc = bytes.withUnsafeBytes {
            RunChecksum.update(crc, UnsafeRawBufferPointer(rebasing: $0[start..<Int(last.address.offset)]))
        }
        withUnsafeBytes(of: RunChecksum.finish(crc).littleEndian) {
            bytes.replaceSubrange((Int(last.address.offset) + 44)..<(Int(last.address.offset) + 48), with: $0)
        }
        reseal(&bytes, pageAt: Int(last.address.offset))
        fileSystem.setContents(bytes, of: snapshot)
        fileSystem.setContents(slotted, of: "\(path)/root")

        let reader = try Store.openReadOnly(at: path, options: testOptions(fileSystem))
        #expect(reader.generation == generation - 1, "the slots name the generation before the run")
        reader.close()
        let writer = try Store.open(at: path, options: testOptions(fileSystem))
        #expect(writer.generation == generation)
        #expect(try writer.read().get([7], in: "later") == Array(repeating: 7, count: 300))
        writer.close()
    }
}
