#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file descriptor written through a buffer: results go to standard output, messages and
/// progress to standard error. The tool runs on the main actor, and so do these.
@MainActor final class OutputStream {
    let descriptor: Int32
    private var buffer: [UInt8] = []
    private let limit: Int

    static let standardOutput = OutputStream(descriptor: 1, limit: 64 << 10)
    /// Unbuffered in effect: every write is flushed at once.
    static let standardError = OutputStream(descriptor: 2, limit: 0)

    private init(descriptor: Int32, limit: Int) {
        self.descriptor = descriptor
        self.limit = limit
        buffer.reserveCapacity(limit)
    }

    /// True if the descriptor is a terminal.
    var isTerminal: Bool { isatty(descriptor) == 1 }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= limit { flush() }
    }

    func write(bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= limit { flush() }
    }

    func line(_ text: String = "") {
        write(text + "\n")
    }

    /// Writes out what is buffered, retrying on interrupts and short writes. Gives up
    /// silently on other errors: a closed pipe ends the tool through SIGPIPE anyway.
    func flush() {
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { raw in
                writeDescriptor(descriptor, raw.baseAddress! + offset, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                break
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// write(2), out of reach of the stream's own `write` methods.
private func writeDescriptor(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
