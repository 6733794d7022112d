#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads the components of an order-preserving key back, in the order they were appended.
///
/// ```swift
/// var decoder = KeyDecoder(key)
/// let name = try decoder.decode(String.self)
/// let id = try decoder.decode(Int64.self)
/// assert(decoder.isAtEnd)
/// ```
///
/// Every read is bounds-checked: malformed or hostile bytes make ``decode(_:)`` throw
/// ``StorageError/invalidKey(reason:)`` (naming the byte offset), never trap. Decoding is also
/// strict: it accepts only the canonical bytes an encoder produces, so a value that decodes
/// re-encodes to exactly the bytes it was read from.
public struct KeyDecoder: Sendable {
    /// The key being read.
    public let bytes: [UInt8]

    /// The offset of the next unread byte in ``bytes``.
    public private(set) var offset: Int

    /// Creates a decoder positioned at the first byte of `bytes`.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
    }

    /// True when every byte has been consumed.
    public var isAtEnd: Bool {
        offset >= bytes.count
    }

    /// Reads the next component as a `T`.
    @inlinable
    public mutating func decode<T: KeyComponent>(_ type: T.Type) throws(StorageError) -> T {
        try T.decodeKey(from: &self)
    }
}

// MARK: - Primitive readers used by the built-in conformances

extension KeyDecoder {
    /// An ``StorageError/invalidKey(reason:)`` error that names the offset it concerns.
    func invalid(_ reason: String, at position: Int) -> StorageError {
        .invalidKey(reason: "at byte \(position) of a \(bytes.count)-byte key: \(reason)")
    }

    /// `value` (read at `position`) as `T`, or an error if `T` cannot hold it: every integer
    /// width shares one 8-byte encoding, and narrowing is where a wrong type shows.
    func narrowed<T: FixedWidthInteger>(_ value: some BinaryInteger, at position: Int) throws(StorageError) -> T {
        guard let narrowed = T(exactly: value) else {
            throw invalid("\(value) does not fit in \(T.self)", at: position)
        }
        return narrowed
    }

    /// Reads one byte.
    mutating func readByte(_ what: String) throws(StorageError) -> UInt8 {
        guard offset < bytes.count else {
            throw invalid("expected \(what), found the end of the key", at: offset)
        }
        let byte = bytes[offset]
        offset += 1
        return byte
    }

    /// Reads 8 bytes as a big-endian unsigned integer.
    mutating func readBigEndianUInt64(_ what: String) throws(StorageError) -> UInt64 {
        guard bytes.count - offset >= 8 else {
            throw invalid("expected 8 bytes of \(what), found \(bytes.count - offset)", at: offset)
        }
        var value: UInt64 = 0
        for index in offset..<(offset + 8) {
            value = value << 8 | UInt64(bytes[index])
        }
        offset += 8
        return value
    }

    /// Reads exactly `count` bytes.
    mutating func readFixed(_ count: Int, _ what: String) throws(StorageError) -> ArraySlice<UInt8> {
        guard count >= 0, bytes.count - offset >= count else {
            throw invalid("expected \(count) bytes of \(what), found \(bytes.count - offset)", at: offset)
        }
        let slice = bytes[offset..<(offset + count)]
        offset += count
        return slice
    }

    /// Reads an escaped byte string (see `KeyEncoder.appendEscaped(_:)`) and returns its body
    /// with the escapes removed. Rejects a 0x00 followed by anything but 0xFF or 0x01, and a
    /// string with no terminator.
    mutating func readEscaped(_ what: String) throws(StorageError) -> [UInt8] {
        try readEscaped(what) { Array($0) }
    }

    /// Reads an escaped byte string and passes its unescaped body to `body`, returning what
    /// `body` returns. When the body contains no escaped zero bytes (the common case) `body`
    /// sees the key's own bytes, so nothing is copied; otherwise it sees a temporary unescaped
    /// copy. The buffer is valid only during the call.
    mutating func readEscaped<Result>(
        _ what: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) throws(StorageError) -> Result {
        let start = offset
        // First pass: find the terminator and count the escapes. The scan reports a failure
        // instead of throwing inside the closure.
        var failure: (reason: String, position: Int)? = nil
        var terminator = start
        var escapes = 0
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else {
                failure = ("expected \(what), found the end of the key", start)
                return
            }
            let end = buffer.count
            var position = start
            while true {
                guard position < end,
                    let hit = memchr(base + position, 0, end - position)
                else {
                    failure = ("\(what) has no 0x00 0x01 terminator", start)
                    return
                }
                let zero = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(hit))
                guard zero + 1 < end else {
                    failure = ("\(what) ends in the middle of a 0x00 escape", zero)
                    return
                }
                switch buffer[zero + 1] {
                case KeyEncoder.escapedZeroSecondByte:
                    escapes += 1
                    position = zero + 2
                case KeyEncoder.terminatorSecondByte:
                    terminator = zero
                    return
                default:
                    failure = (
                        "\(what) has 0x00 followed by 0x\(String(buffer[zero + 1], radix: 16)); "
                            + "only 0x00 0xFF (a zero byte) and 0x00 0x01 (the end) are valid", zero
                    )
                    return
                }
            }
        }
        if let failure {
            throw invalid(failure.reason, at: failure.position)
        }
        offset = terminator + 2
        // Second pass: hand over the body, unescaping only if there is something to unescape.
        return bytes.withUnsafeBufferPointer { buffer in
            let escaped = UnsafeBufferPointer(rebasing: buffer[start..<terminator])
            guard escapes > 0 else {
                return body(escaped)
            }
            var unescaped: [UInt8] = []
            unescaped.reserveCapacity(escaped.count - escapes)
            var index = 0
            while index < escaped.count {
                unescaped.append(escaped[index])
                // Every 0x00 in the body was checked above to be followed by 0xFF.
                index += escaped[index] == 0 ? 2 : 1
            }
            return unescaped.withUnsafeBufferPointer(body)
        }
    }
}
