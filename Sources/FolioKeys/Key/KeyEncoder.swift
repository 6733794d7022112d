#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Builds an order-preserving key by appending components one after another.
///
/// Appending `a` then `b` produces the key of the tuple `(a, b)`: because every component
/// encoding is prefix-free, the bytes compare in lexicographic tuple order.
///
/// ```swift
/// var encoder = KeyEncoder()
/// encoder.append("alice")
/// encoder.append(Int64(42))
/// let key = encoder.bytes
/// ```
public struct KeyEncoder: Sendable {
    /// The key built so far.
    public private(set) var bytes: [UInt8]

    /// Creates an empty encoder with room for a typical small key (32 bytes), so that
    /// encoding a short key allocates once.
    public init() {
        bytes = []
        bytes.reserveCapacity(32)
    }

    /// Creates an empty encoder that can hold `capacity` bytes without reallocating (a negative
    /// capacity counts as zero).
    public init(reservingCapacity capacity: Int) {
        bytes = []
        bytes.reserveCapacity(max(0, capacity))
    }

    /// Appends the encoding of `value` after the components already appended.
    @inlinable
    public mutating func append<T: KeyComponent>(_ value: T) {
        value.appendKey(to: &self)
    }
}

// MARK: - Primitive writers used by the built-in conformances

extension KeyEncoder {
    /// The byte that, after 0x00, marks the end of an escaped byte string.
    static let terminatorSecondByte: UInt8 = 0x01
    /// The byte that, after 0x00, stands for a 0x00 byte inside an escaped byte string.
    static let escapedZeroSecondByte: UInt8 = 0xFF

    /// Appends one raw byte.
    mutating func appendByte(_ byte: UInt8) {
        bytes.append(byte)
    }

    /// Appends bytes as they are (for fixed-length components such as UUID, which need no
    /// escaping because every encoding has the same length).
    mutating func appendVerbatim(_ raw: UnsafeRawBufferPointer) {
        // A typed buffer lets `append(contentsOf:)` copy with memcpy.
        raw.withMemoryRebound(to: UInt8.self) { bytes.append(contentsOf: $0) }
    }

    /// Appends `value` as 8 bytes, most significant first, so that unsigned `memcmp` order is
    /// numeric order.
    mutating func appendBigEndian(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { appendVerbatim($0) }
    }

    /// Appends a byte string in escaped form: each 0x00 becomes 0x00 0xFF, and the string ends
    /// with 0x00 0x01.
    ///
    /// Why this preserves order and is prefix-free: inside the body a 0x00 is always followed by
    /// 0xFF, and the terminator is 0x00 0x01. Comparing two encodings, the first place they
    /// differ is either a plain byte against a plain byte (the original strings differ there in
    /// the same direction), an escaped 0x00 (0x00 0xFF) against a byte ≥ 0x01 (the original had
    /// 0x00 < that byte, and 0x00 sorts first), or the terminator (0x00 0x01) against anything
    /// else, which is always greater (the shorter string is a prefix of the longer one and must
    /// sort first). The terminator pair never occurs inside a body, so no encoding is a proper
    /// prefix of another.
    mutating func appendEscaped(_ source: UnsafeBufferPointer<UInt8>) {
        bytes.reserveCapacity(bytes.count + source.count + 2)
        if let base = source.baseAddress {
            var start = 0
            let end = source.count
            while start < end {
                guard let hit = memchr(base + start, 0, end - start) else {
                    bytes.append(contentsOf: UnsafeBufferPointer(start: base + start, count: end - start))
                    break
                }
                let zero = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(hit))
                bytes.append(contentsOf: UnsafeBufferPointer(start: base + start, count: zero - start))
                bytes.append(0x00)
                bytes.append(Self.escapedZeroSecondByte)
                start = zero + 1
            }
        }
        appendTerminator()
    }

    /// Appends one byte of an escaped byte string's body (see ``appendEscaped(_:)``).
    mutating func appendEscapedByte(_ byte: UInt8) {
        if byte == 0 {
            bytes.append(0x00)
            bytes.append(Self.escapedZeroSecondByte)
        } else {
            bytes.append(byte)
        }
    }

    /// Ends an escaped byte string whose body was written with ``appendEscapedByte(_:)``.
    mutating func appendTerminator() {
        bytes.append(0x00)
        bytes.append(Self.terminatorSecondByte)
    }

    /// Makes room for `count` more bytes.
    mutating func reserveAdditional(_ count: Int) {
        bytes.reserveCapacity(bytes.count + count)
    }
}
