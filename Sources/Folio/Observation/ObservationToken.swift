import FolioStorage
/// A position in a store's history: the generation of a commit. Events carry the token of
/// their commit; keep the last one (it is `Codable`) to resume observing after it later,
/// or in another process.
public struct ObservationToken: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The commit's generation.
    public var generation: UInt64

    /// The token of the commit that created `generation`.
    public init(generation: UInt64) {
        self.generation = generation
    }

    public static func < (a: Self, b: Self) -> Bool { a.generation < b.generation }

    public var description: String { "generation \(generation)" }
}

extension Persistence {
    /// The token of the newest committed generation this persistence sees.
    public nonisolated var currentToken: ObservationToken {
        core.store.followIfRootFileChanged()
        return ObservationToken(generation: core.store.generation)
    }
}
