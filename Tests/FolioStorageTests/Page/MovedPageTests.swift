import Testing
@_spi(Testing) @testable import FolioStorage
import FolioTestSupport

/// A page moved whole to another offset (what compaction, backup and restore do with every
/// unchanged leaf and overflow page) carries the checksum its bytes have there, computed
/// from its stored checksum, and is byte for byte the page writing its contents again gives.
@Suite struct MovedPageTests {
    /// Random bodies, offsets and header fields: the checksum from the stored one equals the
    /// checksum of the moved bytes, for lengths across the CRC's two-stream threshold.
    @Test func theMovedChecksumEqualsTheBytesChecksum() {
        var random = SplitMix64(seed: 17)
        // One shifter for every trial, as an appender keeps one: its kept power must follow
        // the length.
        var shifter = CRC32CShifter()
        for trial in 0..<300 {
            let kind: PageKind = trial % 2 == 0 ? .leaf : .overflow
            var source = ByteWriter()
            let start = PageHeader.begin(
                &source, kind: kind, count: Int(random.next() % 200), generation: random.next())
            let bodyLength = trial % 60 == 0 ? 70_000 : Int(random.next() % 9_000)
            for _ in 0..<bodyLength { source.append(UInt8(truncatingIfNeeded: random.next())) }
            let sourceOffset = 64 + random.next() % (1 << 40)
            PageHeader.seal(&source, start: start, fileOffset: sourceOffset)

            var moved = ByteWriter()
            let movedStart = PageHeader.begin(
                &moved, kind: kind, count: Int(random.next() % 200), generation: random.next())
            moved.append(bytes: source.bytes[PageHeader.size...])
            moved.set(UInt32(source.count), at: movedStart + 8)
            let offset = 64 + random.next() % (1 << 40)
            let computed = source.bytes.withUnsafeBytes { page in
                moved.bytes.withUnsafeBytes { header in
                    PageHeader.checksum(
                        movedFrom: page, at: sourceOffset,
                        header: UnsafeRawBufferPointer(rebasing: header[4..<PageHeader.size]), to: offset,
                        shifter: &shifter)
                }
            }
            let read = moved.bytes.withUnsafeBytes { PageHeader.checksum($0[4...], fileOffset: offset) }
            #expect(computed == read, "trial \(trial): \(source.count) bytes, \(sourceOffset) to \(offset)")
        }
    }

    /// A leaf read from a file and moved is the page `appendLeaf` writes for its entries at
    /// the same place and generation, and a moved overflow page the one `appendOverflow`
    /// writes for its value.
    @Test func aMovedPageIsThePageItsContentsEncodeTo() throws {
        let fs = MemoryFileSystem()
        try fs.createDirectory("/s")
        let keys = (0..<40).map { Array("key-\($0)".utf8)[...] }
        let values = (0..<40).map { LeafValue.inline(Array(repeating: UInt8($0), count: $0 * 3)[...]) }
        var writer = ByteWriter()
        TreePage.encodeLeaf(keys: keys, values: values, generation: 7, into: &writer, at: 4_096)
        let address = PageAddress(offset: 4_096, length: UInt32(writer.count))
        guard case .leaf(let leaf) = try TreePage.decode(writer.bytes, address: address, file: "/s/f") else {
            Issue.record("not a leaf")
            return
        }
        let page = try #require(leaf.entries.unchangedPage)
        #expect(page == writer.bytes)

        let overflowValue = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        var overflow = ByteWriter()
        TreePage.encodeOverflow(overflowValue, generation: 3, into: &overflow, at: 900)

        func appender(_ name: String) throws -> PageAppender {
            let file = SnapshotFile(number: 1, path: "/s/\(name)", handle: try fs.open("/s/\(name)", mode: .truncate))
            return PageAppender(file: file, generation: 42, start: 64, collectsCacheEntries: false)
        }
        var moving = try appender("moved")
        var writing = try appender("written")
        let movedLeaf = try moving.appendPage(copying: page, from: 4_096, kind: .leaf, count: leaf.entries.count)
        let writtenLeaf = try writing.appendLeaf(leaf.entries)
        let movedOverflow = try moving.appendPage(copying: overflow.bytes, from: 900, kind: .overflow, count: 0)
        let writtenOverflow = try writing.appendOverflow(overflowValue)
        #expect(movedLeaf == writtenLeaf)
        #expect(movedOverflow == writtenOverflow)
        #expect(moving.buffer.bytes == writing.buffer.bytes)
        _ = try TreePage.decode(
            Array(moving.buffer.bytes[0..<Int(movedLeaf.length)]), address: movedLeaf, file: "/s/moved")
    }

    /// Only a leaf whose page is exactly its entries is moved whole: one that references an
    /// overflow page (whose address changes in a copy) or was changed after it was read is
    /// written entry by entry.
    @Test func onlyAnUnchangedLeafOfInlineValuesIsMovedWhole() throws {
        let keys = (0..<3).map { Array("k\($0)".utf8)[...] }
        var writer = ByteWriter()
        TreePage.encodeLeaf(
            keys: keys,
            values: [.inline([1, 2][...]), .overflow(PageAddress(offset: 64, length: 100)), .inline([][...])],
            generation: 1, into: &writer, at: 1_000)
        let withOverflow = PageAddress(offset: 1_000, length: UInt32(writer.count))
        guard case .leaf(let referencing) = try TreePage.decode(writer.bytes, address: withOverflow, file: "f") else {
            Issue.record("not a leaf")
            return
        }
        #expect(referencing.entries.unchangedPage == nil)

        var plain = ByteWriter()
        TreePage.encodeLeaf(
            keys: keys, values: keys.map { .inline($0) }, generation: 1, into: &plain, at: 2_000)
        guard
            case .leaf(let leaf) = try TreePage.decode(
                plain.bytes, address: PageAddress(offset: 2_000, length: UInt32(plain.count)), file: "f")
        else {
            Issue.record("not a leaf")
            return
        }
        #expect(leaf.entries.unchangedPage != nil)
        var replaced = leaf.entries
        _ = replaced.replaceValue(at: 1, with: .inline([9][...]))
        #expect(replaced.unchangedPage == nil)
        var removed = leaf.entries
        _ = removed.remove(at: 0)
        #expect(removed.unchangedPage == nil)
        var inserted = leaf.entries
        inserted.insert(key: Array("k3".utf8)[...], value: .inline([][...]), at: 3)
        #expect(inserted.unchangedPage == nil)
    }
}

/// The scan that lets a copy move a leaf without decoding it accepts exactly the leaves of
/// inline values that decoding accepts, and nothing decoding would reject.
@Suite struct InlineLeafScanTests {
    func page(_ values: [LeafValue]) -> [UInt8] {
        var writer = ByteWriter()
        let keys = values.indices.map { Array("key-\($0)".utf8)[...] }
        TreePage.encodeLeaf(keys: keys, values: values, generation: 1, into: &writer, at: 4_096)
        return writer.bytes
    }

    func scan(_ bytes: [UInt8], count: Int) -> Bool {
        bytes.withUnsafeBytes { TreePage.isInlineLeaf($0, count: count) }
    }

    @Test func acceptsALeafOfInlineValues() {
        let bytes = page((0..<30).map { .inline(Array(repeating: UInt8($0), count: $0 * 5)[...]) })
        #expect(scan(bytes, count: 30))
    }

    @Test func refusesAnOverflowReference() {
        let bytes = page([.inline([1][...]), .overflow(PageAddress(offset: 64, length: 90))])
        #expect(!scan(bytes, count: 2))
    }

    /// Each damage that decoding reports is refused here too: the copy then decodes the page,
    /// and reports it.
    @Test func refusesWhatDecodingRejects() throws {
        let bytes = page((0..<4).map { .inline(Array(repeating: 7, count: $0 + 1)[...]) })
        #expect(!scan(bytes, count: 0), "no entries")
        #expect(!scan(bytes, count: 5), "an entry past the end")
        #expect(!scan(bytes, count: 3), "stray bytes after the entries")
        #expect(!scan(bytes + [0], count: 4), "a stray byte")
        #expect(!scan(Array(bytes.dropLast()), count: 4), "a value cut short")
        var longKey = bytes
        longKey[PageHeader.size] = 0xFF
        longKey[PageHeader.size + 1] = 0xFF
        #expect(!scan(longKey, count: 4), "a key longer than the limit")
        var unknownKind = bytes
        unknownKind[PageHeader.size + 2] = 2
        #expect(!scan(unknownKind, count: 4), "value kind 2 is never on disk")
        var longValue = bytes
        let valueAt = PageHeader.size + 3 + "key-0".utf8.count
        longValue[valueAt + 3] = 0x80
        #expect(!scan(longValue, count: 4), "a value length past the page")
        // The same pages, decoded, fail (or, for a reference, decode): never a page the scan
        // accepts that decoding would refuse.
        for damaged in [longKey, unknownKind, longValue] {
            #expect(throws: StorageError.self) {
                try TreePage.decode(
                    damaged, checked: PageHeader.fields(ofSealed: damaged),
                    address: PageAddress(offset: 4_096, length: UInt32(damaged.count)), file: "f")
            }
        }
    }
}

/// A whole-store copy (backup, restore) moves every page it can: each overflow page and each
/// leaf that references none, so each of their bytes goes through a CRC once. If the moving
/// path went unused the copy would still be right, only slower; this says it is used.
@Suite struct CopyMovesPagesTests {
    @Test func aCopyMovesEveryOverflowPageAndEveryLeafOfInlineValues() throws {
        let fs = MemoryFileSystem()
        let (store, _) = try storeWithEveryPageKind(fs)
        defer { store.close() }
        let root = try store.read().root
        var movable = 0
        func walk(_ address: PageAddress) throws {
            switch try root.pages.node(at: address) {
            case .leaf(let leaf):
                let overflow = leaf.values.filter { if case .overflow = $0 { true } else { false } }.count
                movable += overflow + (overflow == 0 ? 1 : 0)
            case .branch(let branch):
                for child in branch.children { try walk(child) }
            }
        }
        for (_, descriptor) in try root.allDescriptors() where !descriptor.root.isNone { try walk(descriptor.root) }
        #expect(movable > 10)

        try fs.createDirectory("/copy")
        let file = SnapshotFile(number: 1, path: "/copy/1", handle: try fs.open("/copy/1", mode: .truncate))
        let copied = try LiveCopy.write(
            root, into: file, generation: root.record.generation, timestamp: root.record.timestamp, previous: nil,
            crashPoint: .backupMidCopy, progress: nil)
        #expect(copied.moved == movable, "\(copied.moved) of \(copied.pages) pages moved, \(movable) movable")
    }
}
