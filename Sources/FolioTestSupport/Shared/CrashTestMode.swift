import Foundation

/// Tier B (crash tests with real processes) runs a short version in every `swift test`, so
/// CI exercises it, and the long one with `FOLIO_CRASH_TESTS=1` (Docs/Durability.md §8).
/// In test support so that the kill tests of every test target choose alike.
public enum CrashTestMode {
    public static var isLong: Bool { ProcessInfo.processInfo.environment["FOLIO_CRASH_TESTS"] == "1" }

    /// `short` normally, `long` under `FOLIO_CRASH_TESTS=1`.
    public static func pick<T>(short: T, long: T) -> T { isLong ? long : short }
}
