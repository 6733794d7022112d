/// One end of a range: of identifiers or index values (Folio's `IndexRange` and
/// `AnyRange`), or of keys in byte order (the engine's `KeyRange`, whose bounds are
/// `RangeBound<[UInt8]>`).
public enum RangeBound<Value: Sendable>: Sendable {
    /// No limit on this side.
    case unbounded
    /// The value itself is in the range.
    case included(Value)
    /// The value itself is not in the range.
    case excluded(Value)
}

extension RangeBound: Equatable where Value: Equatable {}
