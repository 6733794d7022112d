/// Which of the possible post-crash states ``PowerLossFileSystem/crashImage(using:mode:)``
/// builds.
public enum CrashMode: Hashable, Sendable, CaseIterable {
    /// Only what was made durable survives: every pending (unsynced) write, truncate and
    /// namespace change is dropped. The harshest image a correct file system can leave.
    case durableOnly
    /// Everything survives, as if the power had not gone out: the image equals the live view.
    case everything
    /// A random mix: the durable namespace plus a random order-preserving subset of the
    /// pending namespace changes; for each file, its durable bytes plus a random subset of its
    /// pending writes in a random order, each whole, dropped or torn at 512-byte sectors, and
    /// each pending truncate kept or dropped. The generator decides, so a seed reproduces it.
    case random
}
