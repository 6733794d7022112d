import Folio

/// The keys of one `kv` workload and their values, made before the timed part: key `i` is
/// named `key-<i>` in every system and holds `Value.make(i)`. Folio's typed keys are made
/// here too, as an app declares its keys once.
struct BenchKeys<Value: BenchValue>: @unchecked Sendable {
    // @unchecked: immutable arrays of Sendable values and of immutable ValueKey objects.
    let names: [String]
    let folioKeys: [ValueKey<Value>]
    let values: [Value]

    /// Keys `0..<count`.
    init(count: Int) {
        names = (0..<count).map { "key-\($0)" }
        folioKeys = names.map { ValueKey<Value>($0, default: Value.make(-1)) }
        values = (0..<count).map(Value.make)
    }

    var count: Int { names.count }

    /// The checksum of the values of `indexes`, each read once: what a read pass must find.
    func expectedChecksum<S: Sequence>(_ indexes: S) -> Int where S.Element == Int {
        indexes.reduce(0) { $0 &+ values[$1].checksum }
    }
}
