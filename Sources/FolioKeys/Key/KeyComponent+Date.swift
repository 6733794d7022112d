#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// `Date` as a key component: its time interval since the reference date, encoded as a
// `Double` so that earlier dates sort first (Docs/Keys.md).
extension Date: KeyComponent {
    /// Appends `timeIntervalSinceReferenceDate` encoded as a Double (8 bytes).
    ///
    /// `Date` stores exactly that Double and compares by it, so the Double's key order is the
    /// date order. The Double policies carry over: the date at -0.0 seconds is the date at
    /// +0.0, and a NaN date (which `Date`'s own `==` does not equal even to itself) is one key
    /// that sorts after every other date.
    public func appendKey(to encoder: inout KeyEncoder) {
        encoder.appendDouble(timeIntervalSinceReferenceDate)
    }

    /// Reads a Double key as seconds since the reference date (2001-01-01 00:00:00 UTC).
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Date {
        Date(timeIntervalSinceReferenceDate: try decoder.decodeDouble())
    }
}
