import Foundation

/// The store's info file: a small JSON object written once, at creation (Docs/Format.md §2):
///
///     {"format":"folio-store","formatVersion":1,"created":"2026-11-21T20:18:00Z"}
///
/// Readers require `format` to be "folio-store" and `formatVersion` to be one they read.
/// Unknown members are ignored, so later versions may add some.
struct InfoFile: Equatable, Sendable {
    static let formatName = "folio-store"

    var formatVersion: UInt32
    /// ISO 8601, UTC, seconds precision.
    var created: String

    func encoded() -> [UInt8] {
        Array("{\"format\":\"\(Self.formatName)\",\"formatVersion\":\(formatVersion),\"created\":\"\(created)\"}\n".utf8)
    }

    static func decode(_ bytes: [UInt8], path: String) throws(StorageError) -> InfoFile {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              object["format"] as? String == formatName else {
            throw .notAStore(path: StoragePath.parent(of: path), reason: "info file is not a Folio info file")
        }
        guard let version = (object["formatVersion"] as? NSNumber)?.uint32Value else {
            throw .notAStore(path: StoragePath.parent(of: path), reason: "info file has no format version")
        }
        guard version <= StorageFormat.version else {
            throw .unsupportedFormatVersion(path: StoragePath.parent(of: path), found: version, supported: StorageFormat.version)
        }
        return InfoFile(formatVersion: version, created: object["created"] as? String ?? "")
    }

    static func now() -> InfoFile {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return InfoFile(formatVersion: StorageFormat.version, created: formatter.string(from: Date()))
    }
}

/// Wall-clock time in microseconds since 1970, for commit records.
enum Clock {
    static func microsecondsSince1970() -> UInt64 {
        UInt64(max(0, Date().timeIntervalSince1970 * 1_000_000))
    }
}
