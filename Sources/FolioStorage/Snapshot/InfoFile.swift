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

    /// The members a reader requires, decoded strictly: `formatVersion` must be a whole
    /// number that fits in 32 bits (not `true`, not `1.9`), and at least 1.
    private struct Members: Decodable {
        var format: String
        var formatVersion: UInt32
        var created: String?
    }

    static func decode(_ bytes: [UInt8], path: String) throws(StorageError) -> InfoFile {
        let directory = StoragePath.parent(of: path)
        guard let members = try? JSONDecoder().decode(Members.self, from: Data(bytes)), members.format == formatName else {
            throw .notAStore(path: directory, reason: "info file is not a Folio info file")
        }
        guard members.formatVersion >= 1 else {
            throw .notAStore(path: directory, reason: "info file has format version 0")
        }
        guard members.formatVersion <= StorageFormat.version else {
            throw .unsupportedFormatVersion(path: directory, found: members.formatVersion, supported: StorageFormat.version)
        }
        return InfoFile(formatVersion: members.formatVersion, created: members.created ?? "")
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
