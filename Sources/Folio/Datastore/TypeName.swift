import Foundation
import FolioStorage
/// Type names as the catalog records them, the same on every platform.
enum TypeName {
    /// `String(reflecting:)`, with swift-foundation's module names folded into
    /// `Foundation`: on Linux `UUID` prints as `FoundationEssentials.UUID`, on Apple
    /// platforms as `Foundation.UUID`, and a store must read the same on both.
    static func of(_ type: Any.Type) -> String {
        String(reflecting: type)
            .replacingOccurrences(of: "FoundationEssentials.", with: "Foundation.")
            .replacingOccurrences(of: "FoundationInternationalization.", with: "Foundation.")
    }
}
