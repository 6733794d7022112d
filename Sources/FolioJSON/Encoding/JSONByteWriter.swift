import Foundation

/// A growable byte buffer the encoder writes JSON text into, through a raw pointer (no
/// per-byte uniqueness or bounds checks). Owned by one `EncodingState`; freed by it.
struct JSONByteWriter {
    var base: UnsafeMutablePointer<UInt8>
    var count: Int = 0
    var capacity: Int

    init(capacity: Int = 256) {
        self.capacity = capacity
        self.base = .allocate(capacity: capacity)
    }

    func deallocate() { base.deallocate() }

    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count &+ extra > capacity { grow(extra) }
    }

    @inline(never)
    mutating func grow(_ extra: Int) {
        var newCapacity = capacity &* 2
        while newCapacity < count + extra { newCapacity &*= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    mutating func put(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count &+= 1
    }

    @inline(__always)
    mutating func put(_ a: UInt8, _ b: UInt8) {
        reserve(2)
        base[count] = a
        base[count &+ 1] = b
        count &+= 2
    }

    mutating func put(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard buffer.count > 0 else { return }
        reserve(buffer.count)
        (base + count).update(from: buffer.baseAddress!, count: buffer.count)
        count &+= buffer.count
    }

    mutating func put(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { put($0) }
    }

    /// Writes `text` as is (it must already be valid JSON text, such as a number).
    mutating func putRaw(_ text: String) {
        var text = text
        text.withUTF8 { put($0) }
    }

    mutating func putNull() {
        reserve(4)
        base[count] = UInt8(ascii: "n"); base[count &+ 1] = UInt8(ascii: "u")
        base[count &+ 2] = UInt8(ascii: "l"); base[count &+ 3] = UInt8(ascii: "l")
        count &+= 4
    }

    mutating func putBool(_ value: Bool) {
        if value {
            reserve(4)
            base[count] = UInt8(ascii: "t"); base[count &+ 1] = UInt8(ascii: "r")
            base[count &+ 2] = UInt8(ascii: "u"); base[count &+ 3] = UInt8(ascii: "e")
            count &+= 4
        } else {
            reserve(5)
            base[count] = UInt8(ascii: "f"); base[count &+ 1] = UInt8(ascii: "a")
            base[count &+ 2] = UInt8(ascii: "l"); base[count &+ 3] = UInt8(ascii: "s")
            base[count &+ 4] = UInt8(ascii: "e")
            count &+= 5
        }
    }
}
