import Foundation
import FolioStorage

// When a range of an index can answer a comparison in a predicate. The predicate is
// evaluated with the value type's own `<`; the index is read in key order. A range read
// serves the predicate only if every value `<` places inside the range has its key inside
// the key range (values outside are filtered out afterwards, so the converse is not
// needed). The planner reads a range only for the types below; any other comparison is
// evaluated on the records.

/// Key components whose key order agrees with their `<` on every pair `<` orders, so a key
/// range holds every value the comparison accepts: integers, `UUID` (``OrderExactKey``),
/// `Double`, `Float` and `Date` (keys canonicalise -0.0 to 0.0, which `<` and `==` treat as
/// one value; NaN has a key but `<` accepts no comparison with it, so a filter removes
/// it). Not `String` (``StringRangeBound``), and not any other type: its `<` is its own (an
/// enum's declaration order, say), and its key is its raw value's or its own encoding.
protocol RangeReadableKey {}

extension Double: RangeReadableKey {}
extension Float: RangeReadableKey {}
extension Date: RangeReadableKey {}
extension Optional: RangeReadableKey where Wrapped: RangeReadableKey {}

/// A range of `String` values whose key range holds every string Swift's `<` places in it,
/// once ``extraPoints`` are read too. Keys order strings by the scalars of their normal
/// form; Swift's `<` does for strings in normal form, but takes two shortcuts for others
/// (Docs/Keys.md §9.1): a raw UTF-8 prefix sorts first, and when one normal form is a
/// proper prefix of the other the raw lengths decide. Against a bound that is ASCII (its
/// own normal form, and no scalar of it composes with or reorders around what follows):
///
/// - upper bounds hold: a string `<` (or not above) an ASCII bound has a normal form below
///   (or equal to) the bound's, so its key lies below the bound's key;
/// - lower bounds hold except for one case: a string whose normal form is a proper prefix
///   of the bound, reached through scalars that normalise to ASCII (the Kelvin sign U+212A
///   is "K"), can be `>=` and even `>` the bound by the length tie-break (`"\u{212A}" >=
///   "KA"`) while its key sorts below. Its key is then exactly the key of a proper prefix
///   of the bound: those few values are read as well.
///
/// A non-ASCII bound gives no such guarantee (U+0391 followed by U+0301 is above
/// "\u{391}" by the raw-prefix shortcut, yet its normal form U+0386 sorts below), so the
/// range is not read from an index at all. Checked against Swift's `<` on random strings by
/// `PlanAgreementTests`.
struct StringRangeBound {
    /// The lower bound's proper prefixes, with their keys (none without a lower bound).
    let extraPoints: [(key: [UInt8], value: String)]

    /// Nil unless the values are strings (or optional strings) and every bound is ASCII.
    init?<Value: KeyComponent>(lower: RangeBound<Value>, upper: RangeBound<Value>) {
        guard Value.self == String.self || Value.self == String?.self else { return nil }
        func text(_ bound: RangeBound<Value>) -> (text: String?, ascii: Bool) {
            switch bound {
            case .unbounded: return (nil, true)
            case .included(let value), .excluded(let value):
                // An optional bound of nil sorts first; it is not a string at all.
                let string = (value as? String) ?? ((value as? String?) ?? nil)
                return (string, string.map { $0.utf8.allSatisfy { $0 < 0x80 } } ?? true)
            }
        }
        let (low, lowASCII) = text(lower), (_, highASCII) = text(upper)
        guard lowASCII, highASCII else { return nil }
        var points: [(key: [UInt8], value: String)] = []
        if let low {
            let bytes = Array(low.utf8)
            for length in 0..<bytes.count {
                let prefix = String(decoding: bytes[..<length], as: UTF8.self)
                guard let value = (prefix as? Value) ?? (Optional(prefix) as? Value) else { return nil }
                points.append((value.keyBytes, prefix))
            }
        }
        extraPoints = points
    }
}
