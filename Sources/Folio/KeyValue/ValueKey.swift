/// The keys of a persistence's key-value store (``Persistence/values``), and the place to
/// declare yours: extend it with static keys, and they read as `.launchCount` wherever a
/// key is expected.
///
/// ```swift
/// extension ValueKeys {
///     static let launches = ValueKey<Int>("launches", default: 0)
/// }
///
/// let launches = persistence.values[.launches]
/// ```
///
/// You never create a `ValueKeys` itself: every key is a ``ValueKey``, which carries its
/// value type and default.
public class ValueKeys: @unchecked Sendable {
    // @unchecked: its one stored property is an immutable `String`; the class is not final
    // only so that `ValueKey<Value>` can inherit from it (what lets `.launchCount` be found
    // among the static members declared on `ValueKeys`).

    /// The key's name in the store: at most ``maximumNameLength`` bytes of UTF-8.
    public let name: String

    /// The longest name, in bytes of UTF-8. A longer one is refused with
    /// ``FolioError/keyTooLong(key:length:maximum:)`` when it is read or written.
    public static let maximumNameLength = 512

    init(name: String) {
        self.name = name
    }
}

/// A key of the key-value store: its name, the type of its value, and the value read while
/// none is stored.
///
/// Two keys with the same name are the same entry in the store, whatever their types: one
/// whose stored value does not decode as its type reads as
/// ``FolioError/valueDecodingFailed(key:type:reason:)`` (the subscript gives the default).
public final class ValueKey<Value: Codable & Sendable>: ValueKeys, @unchecked Sendable {
    // @unchecked: inherits ValueKeys' reasoning; `defaultValue` is immutable and Sendable.

    /// What reading the key returns while no value is stored under it.
    public let defaultValue: Value

    /// A key named `name` (at most ``ValueKeys/maximumNameLength`` bytes of UTF-8) whose
    /// value reads as `defaultValue` until one is set.
    public init(_ name: String, default defaultValue: Value) {
        self.defaultValue = defaultValue
        super.init(name: name)
    }
}

extension ValueKey {
    /// A key of optional type that reads as nil until a value is set.
    public convenience init<Wrapped>(_ name: String) where Value == Wrapped? {
        self.init(name, default: nil)
    }
}
