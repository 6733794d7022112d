#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One chunk of zeros, shared by every preallocation of the process (PageAppender's
/// `preallocateAfterRun`): making a fresh zeroed array for each one was a sixteenth of a
/// single-record commit's instructions (callgrind: the memset of 1 MiB, every few commits).
///
/// From `calloc`, which hands out a chunk this large as fresh pages the kernel zeroes on
/// first touch: no memset, and, since writing from it only reads, the pages stay the
/// shared zero page instead of the process's memory. Never freed, never written.
enum ZeroBytes {
    nonisolated(unsafe) static let buffer: UnsafeRawBufferPointer = {
        guard let memory = calloc(PageAppender.chunkSize, 1) else {
            fatalError("cannot allocate \(PageAppender.chunkSize) bytes of zeros")
        }
        return UnsafeRawBufferPointer(start: memory, count: PageAppender.chunkSize)
    }()
}
