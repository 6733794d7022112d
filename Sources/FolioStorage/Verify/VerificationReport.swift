// What a verification returns: its problems, report and progress (the checks are in
// Verifier.swift and TreeVerifier+*.swift).

/// One thing wrong with a store, with where it is.
public struct VerificationProblem: Sendable, Equatable, CustomStringConvertible {
    /// The file holding the problem.
    public var file: String
    /// Byte offset in that file (of the page or record).
    public var offset: UInt64
    /// The tree involved, if any.
    public var tree: String?
    /// What is wrong.
    public var detail: String

    public var description: String {
        let place = tree.map { " (tree \"\($0)\")" } ?? ""
        return "\(file) @\(offset)\(place): \(detail)"
    }
}

/// Something verification found that is not damage to the generation it checked: what a
/// writer's next open will do with the bytes past the newest root slot.
public struct VerificationNote: Sendable, Equatable, CustomStringConvertible {
    /// The file it is about.
    public var file: String
    /// Byte offset in that file.
    public var offset: UInt64
    /// What was found.
    public var detail: String

    public var description: String { "\(file) @\(offset): \(detail)" }
}

/// The result of ``Store/verify(progress:)``.
public struct VerificationReport: Sendable {
    /// The generation checked.
    public var generation: UInt64
    /// Everything found wrong; empty for a sound store.
    public var problems: [VerificationProblem]
    /// Pages read and checked.
    public var pagesChecked: Int
    /// Bytes of those pages.
    public var bytesChecked: UInt64
    /// Trees checked.
    public var treesChecked: Int
    /// Commit pages checked along the commit chain.
    public var commitsChecked: Int
    /// What lies past the newest root slot and does not make the store unsound: complete
    /// runs of commits that a writer's next open recovers (until then, readers see the
    /// slot's generation). Empty for a store opened for writing, whose open recovered them.
    public var notes: [VerificationNote] = []

    /// True if nothing is wrong (``notes`` do not count).
    public var isClean: Bool { problems.isEmpty }
}

/// Progress of a verification: bytes checked of about `totalBytes`.
public struct VerificationProgress: Sendable, Equatable {
    /// Bytes of pages checked so far.
    public var bytesChecked: UInt64
    /// About how many bytes there are to check (the live bytes).
    public var totalBytes: UInt64
}
