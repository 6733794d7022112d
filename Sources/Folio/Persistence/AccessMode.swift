import FolioStorage
/// Whether a persistence may write. A type parameter, so that a write through a read-only
/// persistence does not compile: write methods exist only where `Access == ReadWrite`.
public protocol AccessMode: Sendable {}

/// Reads and writes; one writer per store at a time, across processes.
public enum ReadWrite: AccessMode {}

/// Reads only; takes no lock and writes nothing, for helper processes and extensions.
public enum ReadOnly: AccessMode {}
