import Testing
@testable import FolioStorage

/// A page kept for the cache is a copy of its own bytes: never the appender's buffer, which
/// a slice spanning the whole buffer (the first page after a flush) would share.
@Suite struct PageAppenderCopyTests {
    @Test func aCopyOfAWholeBufferHasStorageOfItsOwn() {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 16)
        buffer.append(contentsOf: (0..<4_000).map { UInt8(truncatingIfNeeded: $0) })
        let copy = PageAppender.detachedCopy(of: buffer[0...])
        #expect(copy == buffer)
        #expect(copy.capacity < 2 * copy.count, "the copy kept the buffer's \(copy.capacity) bytes")
        let shared = copy.withUnsafeBufferPointer { a in
            buffer.withUnsafeBufferPointer { a.baseAddress == $0.baseAddress }
        }
        #expect(!shared)
        // What Array(slice) does, which this guards against.
        #expect(Array(buffer[0...]).capacity >= 1 << 16)
    }

    @Test func aCopyOfPartOfABufferIsExactlyThatPart() {
        let buffer = (0..<9_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let copy = PageAppender.detachedCopy(of: buffer[1_234..<5_678])
        #expect(copy == Array(buffer[1_234..<5_678]))
        #expect(copy.capacity < 2 * copy.count)
    }
}
