import Foundation
import FolioStorage

/// Index values and identifiers as text, for tools that work without the app's Swift
/// types: a value is parsed, and a key shown, by the type name the catalog records.
/// Integers of every width, `Double`, `Float`, `String`, `Bool`, `UUID`, `Date` (ISO 8601)
/// and optionals of these (`nil`) are understood; other types are refused with
/// ``FolioError/invalidValue(text:type:)``.
@_spi(Engine) public enum KeyText {
    /// The key of `text` read as a value of the type named `type` (as `String(reflecting:)`
    /// prints it, e.g. `Swift.Int`, `Foundation.UUID`, `Swift.Optional<Swift.String>`).
    public static func key(for text: String, type: String) throws(FolioError) -> [UInt8] {
        if let wrapped = optionalWrapped(type) {
            if text == "nil" { return (nil as Int?).keyBytes }
            return [1] + (try key(for: text, type: wrapped))
        }
        func fail() -> FolioError { .invalidValue(text: text, type: type) }
        switch type {
        case "Swift.Int", "Swift.Int64", "Swift.Int32", "Swift.Int16", "Swift.Int8":
            guard let value = Int64(text) else { throw fail() }
            return value.keyBytes
        case "Swift.UInt", "Swift.UInt64", "Swift.UInt32", "Swift.UInt16", "Swift.UInt8":
            guard let value = UInt64(text) else { throw fail() }
            return value.keyBytes
        case "Swift.Double", "Swift.Float":
            guard let value = Double(text) else { throw fail() }
            return value.keyBytes
        case "Swift.String":
            return text.keyBytes
        case "Swift.Bool":
            guard let value = Bool(text) else { throw fail() }
            return value.keyBytes
        case "Foundation.UUID":
            guard let value = UUID(uuidString: text) else { throw fail() }
            return value.keyBytes
        case "Foundation.Date":
            guard let value = ISO8601DateFormatter().date(from: text) else { throw fail() }
            return value.keyBytes
        default:
            throw fail()
        }
    }

    /// A key shown as text, read as the type named `type`; hexadecimal if the type is not
    /// one of those understood.
    public static func text(for key: [UInt8], type: String) -> String {
        var decoder = KeyDecoder(key)
        func show<T: KeyComponent>(_ kind: T.Type) -> String? {
            guard let value = try? decoder.decode(kind), decoder.isAtEnd else { return nil }
            return String(describing: value)
        }
        let shown: String?
        switch type {
        case "Swift.Int", "Swift.Int64", "Swift.Int32", "Swift.Int16", "Swift.Int8": shown = show(Int64.self)
        case "Swift.UInt", "Swift.UInt64", "Swift.UInt32", "Swift.UInt16", "Swift.UInt8": shown = show(UInt64.self)
        case "Swift.Double", "Swift.Float": shown = show(Double.self)
        case "Swift.String": shown = show(String.self)
        case "Swift.Bool": shown = show(Bool.self)
        case "Foundation.UUID": shown = show(UUID.self).map { $0.uppercased() }
        case "Foundation.Date": shown = (try? decoder.decode(Date.self)).map { ISO8601DateFormatter().string(from: $0) }
        default:
            if let wrapped = optionalWrapped(type) {
                if key == [0] { return "nil" }
                if key.first == 1 { return text(for: Array(key.dropFirst()), type: wrapped) }
            }
            shown = nil
        }
        return shown ?? "0x" + key.map { String(format: "%02x", $0) }.joined()
    }

    static func optionalWrapped(_ type: String) -> String? {
        guard type.hasPrefix("Swift.Optional<"), type.hasSuffix(">") else { return nil }
        return String(type.dropFirst("Swift.Optional<".count).dropLast())
    }
}
