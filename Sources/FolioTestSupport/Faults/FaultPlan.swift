import FolioStorage

/// Which seam call a ``FaultInjectingFileSystem`` fails, how, and for how long.
public struct FaultPlan: Hashable, Sendable, CustomStringConvertible {
    /// How the chosen call fails.
    public enum Kind: Hashable, Sendable {
        /// The call throws `EIO` without doing anything.
        case io
        /// The call throws `ENOSPC` without doing anything.
        case noSpace
        /// For a write: half the bytes (rounded down, possibly none) reach the underlying
        /// file, then the call throws `ENOSPC`, as a real short write followed by a failure
        /// does. For any other call this is the same as ``io``.
        case shortWrite
        /// The call throws `EACCES` without doing anything: a file or directory this
        /// process may read but not write.
        case accessDenied
    }

    /// Whether the fault outlives the chosen call.
    public enum Persistence: Hashable, Sendable {
        /// Only the chosen call fails; later calls are forwarded normally.
        case transient
        /// The chosen call and every later mutating call (see ``FileOperation/isMutating``:
        /// write, sync, truncate, rename, remove, syncDirectory, createDirectory, lock, and
        /// open in create or truncate mode) fail with the same `errno`, doing nothing, like a
        /// device that has gone bad or full. Reads, sizes, listings and read-only or
        /// read-write opens keep working.
        case persistent
    }

    /// The 1-based number of the call to fail, counted as
    /// ``FaultInjectingFileSystem/callCount`` counts.
    public var failingCall: Int
    /// How the call fails.
    public var kind: Kind
    /// Whether later mutating calls fail too.
    public var persistence: Persistence

    /// Fails call number `failingCall` (1-based) with `kind`, once or from then on.
    public init(failingCall: Int, kind: Kind = .io, persistence: Persistence = .transient) {
        self.failingCall = failingCall
        self.kind = kind
        self.persistence = persistence
    }

    /// `call 7: io, transient`.
    public var description: String {
        "call \(failingCall): \(kind), \(persistence)"
    }

    /// The `errno` the fault throws for `operation`: `EIO` for ``Kind/io`` (and for
    /// ``Kind/shortWrite`` on anything but a write), `ENOSPC` otherwise.
    func code(for operation: FileOperation) -> Int32 {
        switch kind {
        case .io: return SystemError.io
        case .noSpace: return SystemError.noSpace
        case .shortWrite: return operation.kind == .write ? SystemError.noSpace : SystemError.io
        case .accessDenied: return SystemError.accessDenied
        }
    }
}
