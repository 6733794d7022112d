import Testing
@testable import FolioStorage
import FolioTestSupport

/// The window a backup or restore reads pages through returns exactly the file's bytes for
/// any order of reads, reads a forward walk in a few large reads, and reads little more than
/// the pages themselves when the walk jumps about.
@Suite struct PageWindowTests {
    /// A file of `length` random bytes, its window reader (read ahead up to `end`), and the
    /// recording file system that counts its reads.
    func window(
        length: Int, end: UInt64, seed: UInt64
    ) throws -> (window: PageWindow, bytes: [UInt8], recording: RecordingFileSystem) {
        var random = SplitMix64(seed: seed)
        let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let memory = MemoryFileSystem()
        try memory.createDirectory("/s")
        let file = try memory.open("/s/f", mode: .truncate)
        try file.write(bytes, at: 0)
        let recording = RecordingFileSystem(wrapping: memory)
        let snapshot = SnapshotFile(number: 1, path: "/s/f", handle: try recording.open("/s/f", mode: .readOnly))
        let source = PageSource(file: snapshot, cache: PageCache(capacity: 0), counters: IOCounters())
        return (PageWindow(source: source, end: end), bytes, recording)
    }

    /// Forward runs, jumps back and ahead, pages straddling the read-ahead bound and the end
    /// of the file: each read is the file's bytes there (cut short only at the file's end).
    @Test func everyReadIsTheFilesBytes() throws {
        let length = 900_000
        var (window, bytes, _) = try window(length: length, end: 800_000, seed: 8)
        var random = SplitMix64(seed: 9)
        var offset: UInt64 = 64
        for step in 0..<3_000 {
            if step % 97 == 0 { offset = 64 + random.next() % UInt64(length + 2_000) }
            let count = 24 + Int(random.next() % 6_000)
            let address = PageAddress(offset: offset, length: UInt32(count))
            let ahead = random.next() % 5 != 0
            // Both ways in: a copy of the page, and the bytes in place.
            let page =
                step % 2 == 0
                ? try window.page(at: address, ahead: ahead)
                : try window.withPage(at: address, ahead: ahead) { Array($0) }
            let lower = min(Int(offset), length)
            let expected = Array(bytes[lower..<min(lower + count, length)])
            #expect(page == expected, "step \(step): \(count) bytes at \(offset)")
            offset += UInt64(count)
            if offset >= UInt64(length) { offset = 64 }
        }
    }

    /// A walk forward through 2 MiB of 4 KiB pages takes a handful of reads, not one a page.
    @Test func aForwardWalkReadsInLargeBlocks() throws {
        let length = 2 << 20
        var (window, _, recording) = try window(length: length, end: UInt64(length), seed: 1)
        recording.reset()
        var offset: UInt64 = 64
        var pages = 0
        while offset + 4_096 <= UInt64(length) {
            _ = try window.page(at: PageAddress(offset: offset, length: 4_096))
            offset += 4_096
            pages += 1
        }
        #expect(recording.statistics.reads <= 8, "\(recording.statistics.reads) reads for \(pages) pages")
        #expect(recording.statistics.bytesRead <= length)
    }

    /// Overflow pages come just before their leaf, and a copy reads the leaf first (reading
    /// ahead) and then its overflow pages (not reading ahead): the file is read about once,
    /// in large reads, not re-read by a window that shrinks at every leaf.
    @Test func overflowPagesBeforeTheirLeafAreReadOnce() throws {
        let unit = 5_000 + 5_000 + 2_000
        let units = 400
        let length = 64 + units * unit
        var (window, _, recording) = try window(length: length, end: UInt64(length), seed: 4)
        recording.reset()
        for index in 0..<units {
            let start = UInt64(64 + index * unit)
            _ = try window.page(at: PageAddress(offset: start + 10_000, length: 2_000))
            _ = try window.page(at: PageAddress(offset: start, length: 5_000), ahead: false)
            _ = try window.page(at: PageAddress(offset: start + 5_000, length: 5_000), ahead: false)
        }
        #expect(
            recording.statistics.bytesRead <= length + length / 10,
            "\(recording.statistics.bytesRead) bytes read for a file of \(length)")
        #expect(recording.statistics.reads <= 40, "\(recording.statistics.reads) reads")
    }

    /// Pages read in shuffled order: the window shrinks to reading single pages, so the bytes
    /// read stay within a bounded amount of the pages' own.
    @Test func aScatteredWalkReadsLittleMoreThanItsPages() throws {
        let length = 4 << 20
        var (window, _, recording) = try window(length: length, end: UInt64(length), seed: 2)
        recording.reset()
        var random = SplitMix64(seed: 3)
        var offsets = (0..<(length / 4_096 - 1)).map { UInt64(64 + $0 * 4_096) }
        for index in offsets.indices.reversed() {
            offsets.swapAt(index, Int(random.next() % UInt64(index + 1)))
        }
        for offset in offsets { _ = try window.page(at: PageAddress(offset: offset, length: 4_096)) }
        let wanted = offsets.count * 4_096
        #expect(
            recording.statistics.bytesRead <= wanted + (1 << 20),
            "\(recording.statistics.bytesRead) bytes read for \(wanted) bytes of pages")
    }
}
