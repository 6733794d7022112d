import FolioStorage

extension RangeBound where Value: KeyComponent {
    /// The bound with its value's key in place of the value.
    var encoded: RangeBound<[UInt8]> {
        switch self {
        case .unbounded: return .unbounded
        case .included(let value): return .included(value.keyBytes)
        case .excluded(let value): return .excluded(value.keyBytes)
        }
    }
}

/// A range of identifiers or index values: Swift's `a..<b`, `a...b`, `a...`, `..<b` and
/// `...b` all are (and ``AnyRange`` for bounds chosen at run time). The requirements are
/// named `lower` and `upper`, not `lowerBound`: Swift's ranges have those already, and a
/// second, differently typed `lowerBound` would make `range.lowerBound` ambiguous in code
/// that imports Folio.
public protocol IndexRange<Bound>: Sendable {
    /// The type of the values the range bounds.
    associatedtype Bound: KeyComponent
    /// Where the range starts.
    var lower: RangeBound<Bound> { get }
    /// Where the range ends.
    var upper: RangeBound<Bound> { get }
}

extension Range: IndexRange where Bound: KeyComponent {
    /// Included.
    public var lower: RangeBound<Bound> { .included(self.lowerBound) }
    /// Excluded.
    public var upper: RangeBound<Bound> { .excluded(self.upperBound) }
}

extension ClosedRange: IndexRange where Bound: KeyComponent {
    /// Included.
    public var lower: RangeBound<Bound> { .included(self.lowerBound) }
    /// Included.
    public var upper: RangeBound<Bound> { .included(self.upperBound) }
}

extension PartialRangeFrom: IndexRange where Bound: KeyComponent {
    /// Included.
    public var lower: RangeBound<Bound> { .included(self.lowerBound) }
    /// None.
    public var upper: RangeBound<Bound> { .unbounded }
}

extension PartialRangeUpTo: IndexRange where Bound: KeyComponent {
    /// None.
    public var lower: RangeBound<Bound> { .unbounded }
    /// Excluded.
    public var upper: RangeBound<Bound> { .excluded(self.upperBound) }
}

extension PartialRangeThrough: IndexRange where Bound: KeyComponent {
    /// None.
    public var lower: RangeBound<Bound> { .unbounded }
    /// Included.
    public var upper: RangeBound<Bound> { .included(self.upperBound) }
}

/// A range with bounds chosen at run time, for example from user input.
public struct AnyRange<Bound: KeyComponent>: IndexRange {
    /// Where the range starts.
    public var lower: RangeBound<Bound>
    /// Where the range ends.
    public var upper: RangeBound<Bound>

    /// A range from `lower` to `upper` (both unbounded by default: every value).
    public init(lower: RangeBound<Bound> = .unbounded, upper: RangeBound<Bound> = .unbounded) {
        self.lower = lower
        self.upper = upper
    }

    /// Every value.
    public static var all: AnyRange { AnyRange() }
}

/// The order a range is read in.
public enum RangeOrder: Sendable {
    /// Ascending order of the identifier or index value.
    case ascending
    /// Descending order.
    case descending

    var direction: ScanDirection { self == .ascending ? .forward : .reverse }
}

extension KeyRange {
    /// The key range of the entries whose value lies in `range`.
    ///
    /// With `suffixed` (non-unique index entries: value key followed by the identifier key),
    /// every entry of value `v` starts with the key of `v`, and keys are prefix-free, so
    /// "after `v`" starts at the smallest byte string above every string with that prefix,
    /// and "up to `v` inclusive" ends just below it.
    static func entries<Bound>(in range: some IndexRange<Bound>, suffixed: Bool) -> KeyRange {
        entries(lower: range.lower.encoded, upper: range.upper.encoded, suffixed: suffixed)
    }

    /// ``entries(in:suffixed:)`` for bounds given as encoded value keys.
    static func entries(
        lower lowerBound: RangeBound<[UInt8]>, upper upperBound: RangeBound<[UInt8]>, suffixed: Bool
    ) -> KeyRange {
        let lower: RangeBound<[UInt8]>
        switch lowerBound {
        case .unbounded: lower = .unbounded
        case .included(let key): lower = .included(key)
        case .excluded(let key):
            if suffixed {
                // No byte string sorts above an all-0xFF prefix's extensions: the range is empty.
                guard let above = KeyBytes.prefixUpperBound(key) else {
                    return KeyRange(lower: .excluded(key), upper: .excluded(key))
                }
                lower = .included(above)
            } else {
                lower = .excluded(key)
            }
        }
        let upper: RangeBound<[UInt8]>
        switch upperBound {
        case .unbounded: upper = .unbounded
        case .excluded(let key): upper = .excluded(key)
        case .included(let key):
            if suffixed {
                upper = KeyBytes.prefixUpperBound(key).map { .excluded($0) } ?? .unbounded
            } else {
                upper = .included(key)
            }
        }
        return KeyRange(lower: lower, upper: upper)
    }

    /// The entries of exactly `value`.
    static func entries(of value: some KeyComponent, suffixed: Bool) -> KeyRange {
        let key = value.keyBytes
        return suffixed ? .prefix(key) : KeyRange(lower: .included(key), upper: .included(key))
    }
}
