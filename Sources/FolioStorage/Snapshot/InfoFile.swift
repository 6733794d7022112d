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
        Array(
            "{\"format\":\"\(Self.formatName)\",\"formatVersion\":\(formatVersion),\"created\":\"\(created)\"}\n".utf8)
    }

    /// Reads an info file exactly as Docs/Format.md §2 says: one JSON object (RFC 8259) with
    /// no member name twice, `format` the string "folio-store", `formatVersion` a number
    /// whose exact value is a whole number from 1 to 4294967295 (`2`, `2.0` and `20e-1` are
    /// 2; `2.00000000000000000001` is not whole) and at most the version this engine reads.
    /// `created` is informative: any value, or none, is accepted. Unknown members are ignored.
    static func decode(_ bytes: [UInt8], path: String) throws(StorageError) -> InfoFile {
        let directory = StoragePath.parent(of: path)
        func notAStore(_ reason: String) -> StorageError { .notAStore(path: directory, reason: "info file \(reason)") }
        let members: [(name: [UInt8], value: InfoFileJSON.Value)]
        do throws(InfoFileJSON.Failure) {
            members = try InfoFileJSON.members(of: bytes)
        } catch {
            throw notAStore("is not a Folio info file (\(error))")
        }
        func member(_ name: String) -> InfoFileJSON.Value? { members.first { $0.name.elementsEqual(name.utf8) }?.value }
        guard case .string(let format)? = member("format"), format.elementsEqual(formatName.utf8) else {
            throw notAStore("is not a Folio info file")
        }
        guard case .number(let number)? = member("formatVersion") else {
            throw notAStore("has no numeric formatVersion")
        }
        let version: UInt32
        switch number.wholeValue {
        case .notWhole: throw notAStore("has a formatVersion that is not a whole number")
        case .outOfRange: throw notAStore("has a formatVersion out of range")
        case .value(let value): version = value
        }
        guard version >= 1 else { throw notAStore("has format version 0") }
        guard version <= StorageFormat.version else {
            throw .unsupportedFormatVersion(path: directory, found: version, supported: StorageFormat.version)
        }
        var created = ""
        if case .string(let text)? = member("created") { created = String(decoding: text, as: UTF8.self) }
        return InfoFile(formatVersion: version, created: created)
    }

    static func now() -> InfoFile {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return InfoFile(formatVersion: StorageFormat.createdVersion, created: formatter.string(from: Date()))
    }
}

/// Wall-clock time in microseconds since 1970, for commit records.
enum Clock {
    static func microsecondsSince1970() -> UInt64 {
        UInt64(max(0, Date().timeIntervalSince1970 * 1_000_000))
    }
}
