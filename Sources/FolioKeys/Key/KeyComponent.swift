/// A value that can be one component of an order-preserving B+tree key.
///
/// The B+tree compares keys with `memcmp` (unsigned bytes, lexicographic; a proper prefix sorts
/// first). A conforming type promises that for any two values `a` and `b` of the type, the bytes
/// it appends compare exactly as the values do: `a < b` exactly when the bytes of `a` sort
/// before the bytes of `b`, and `a == b` exactly when the bytes are identical. It also promises
/// that its encoding is *prefix-free*: no encoding of a value is a proper prefix of the encoding
/// of another value of the same type. Prefix-freeness is what makes concatenation work: the
/// bytes of `(a1, a2)` sort before those of `(b1, b2)` exactly when the tuples do, because a
/// difference in the first component is decided before the second component is reached.
///
/// The library conforms `Bool`, every fixed-width standard integer up to 64 bits, `Double`,
/// `Float`, `String`, `[UInt8]`, `Data`, `UUID`, `Date` and `Optional` (when its wrapped type
/// conforms). A custom type conforms by appending and decoding existing components in a fixed
/// order; the byte-level format is specified in `Docs/Keys.md`.
///
/// A custom conformance must keep the equality promise with the type's own `==`, not only
/// with some order of its own: queries answer an equality on an identifier or an indexed
/// value (`#Predicate { $0.code == code }`, `load(code)`) by reading the entries keyed by the
/// constant's bytes, and nothing else. A type whose `==` holds for values with different
/// keys (a case-insensitive `==` over a key of the raw text) makes such a query miss records
/// a scan of every record returns. Append the form `==` compares (the lowercased text), or
/// make `==` compare what the key holds.
public protocol KeyComponent: Sendable {
    /// Appends the order-preserving encoding of `self` to `encoder`.
    func appendKey(to encoder: inout KeyEncoder)

    /// Reads one value from `decoder`, consuming exactly the bytes ``appendKey(to:)`` appends.
    ///
    /// Throws ``StorageError/invalidKey(reason:)`` when the bytes are not an encoding this type
    /// produces (truncated input, an unknown tag, a non-canonical form); it never traps on
    /// hostile input. After a throw the decoder's position is unspecified.
    static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Self
}
