/// The engine suite's keys and values: 16-byte keys derived from their index (so a child
/// process can compute any of them), and 100-byte values from a pool of 1,024 random ones.
enum EngineData {
    /// The tree every engine workload writes.
    static let tree = "bench"
    static let keyLength = 16
    static let valueLength = 100

    /// The key of index `i`: 16 pseudo-random bytes (inserting keys 0, 1, 2... is a
    /// random-order insert).
    @inline(__always)
    static func key(_ i: Int) -> [UInt8] {
        var rng = SplitMix64(seed: UInt64(i) ^ 0x5EED_0F_F011_0000)
        let a = rng.next(), b = rng.next()
        return withUnsafeBytes(of: (a.bigEndian, b.bigEndian)) { Array($0) }
    }

    /// 1,024 distinct pseudo-random 100-byte values; key `i` gets `values[i % 1024]`.
    static let values: [[UInt8]] = {
        var rng = SplitMix64(seed: 0xBA5E)
        return (0..<1024).map { _ in (0..<valueLength).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
    }()

    @inline(__always)
    static func value(_ i: Int) -> [UInt8] { values[i & 1023] }
}
