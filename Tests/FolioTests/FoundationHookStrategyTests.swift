import Testing
import Foundation
import Folio

/// A datastore whose records use every non-default coder strategy, in two releases: the
/// second bumps the version and converts old records in the Foundation form of the hook.
enum Diary {
    /// Read from `Decoder.userInfo` by `Entry`, to show the settings' userInfo arrives.
    static let sourceKey = CodingUserInfoKey(rawValue: "diary.source")!

    struct Entry: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var writtenAt: Date
        var attachment: Data
        var mood: Double
        var source: String = ""

        enum CodingKeys: String, CodingKey { case id, writtenAt, attachment, mood }

        init(id: Int, writtenAt: Date, attachment: Data, mood: Double) {
            self.id = id
            self.writtenAt = writtenAt
            self.attachment = attachment
            self.mood = mood
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            writtenAt = try container.decode(Date.self, forKey: .writtenAt)
            attachment = try container.decode(Data.self, forKey: .attachment)
            mood = try container.decode(Double.self, forKey: .mood)
            source = decoder.userInfo[Diary.sourceKey] as? String ?? "missing"
        }
    }

    struct EntryV2: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var writtenAt: Date
        var attachment: Data
        var mood: Double
        var convertedWith: String
    }

    static var encoder: FolioJSONEncoder {
        var encoder = FolioJSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.dataEncodingStrategy = .deferredToData
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }

    static var decoder: FolioJSONDecoder {
        var decoder = FolioJSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        decoder.dataDecodingStrategy = .deferredToData
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.userInfo[sourceKey] = "the format's settings"
        return decoder
    }

    struct Release1: DatastoreFormat {
        enum Version: String, CaseIterable { case v1 }
        static let key = "diary"
        static let currentVersion = Version.v1
        typealias Instance = Entry
        static var recordEncoder: FolioJSONEncoder { Diary.encoder }
        static var recordDecoder: FolioJSONDecoder { Diary.decoder }
    }

    /// Converts v1 records in the Foundation form of the hook, as formats written before
    /// Folio's own coder do.
    struct Release2: DatastoreFormat {
        enum Version: String, CaseIterable { case v1, v2 }
        static let key = "diary"
        static let currentVersion = Version.v2
        typealias Instance = EntryV2
        static var recordEncoder: FolioJSONEncoder { Diary.encoder }
        static var recordDecoder: FolioJSONDecoder { Diary.decoder }

        static func decode(_ version: Version, from data: Data, using decoder: JSONDecoder) throws -> EntryV2 {
            switch version {
            case .v1:
                let old = try decoder.decode(Entry.self, from: data)
                return EntryV2(
                    id: old.id, writtenAt: old.writtenAt, attachment: old.attachment, mood: old.mood,
                    convertedWith: old.source)
            case .v2:
                return try decoder.decode(EntryV2.self, from: data)
            }
        }
    }

    static func entry(_ id: Int) -> Entry {
        Entry(
            id: id, writtenAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(id) * 86_400),
            attachment: Data([UInt8(id), 0xFF]), mood: id == 0 ? .infinity : Double(id) / 2)
    }
}

@Suite struct FoundationHookStrategyTests {
    /// Records written as version 1 with ISO 8601 dates (and every other non-default
    /// strategy) still read after the version is bumped, through the Foundation form of the
    /// hook: the `JSONDecoder` it gets is configured as the format's `recordDecoder`.
    @Test func theFoundationHookDecodesWithTheFormatsStrategies() async throws {
        let first = Persistence.inMemory()
        let release1 = first.datastore(for: Diary.Release1.self)
        try await first.perform {
            for id in 0..<3 { try await release1.persist(Diary.entry(id)) }
        }
        #expect(try await release1.load(1)?.source == "the format's settings")

        let second = try first.reopened()
        defer { second.close() }
        let release2 = second.datastore(for: Diary.Release2.self)
        for id in 0..<3 {
            let expected = Diary.entry(id)
            let entry = try await release2.load(id)
            #expect(
                entry
                    == Diary.EntryV2(
                        id: id, writtenAt: expected.writtenAt, attachment: expected.attachment,
                        mood: expected.mood, convertedWith: "the format's settings"))
        }
        try await release2.migrateAndReindex()
        #expect(try await release2.load(0)?.mood == .infinity)
        expectSound(second)
    }
}
