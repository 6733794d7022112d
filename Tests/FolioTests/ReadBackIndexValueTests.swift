import Testing
import Foundation
import Folio

/// Index values are what a reader will decode: a record's index keys are computed from the
/// record as it reads back through the format's coders, so a lossy coder setting (ISO 8601
/// dates keep whole seconds) or a `Codable` conformance that normalises never leaves a
/// record out of an index read that a scan would return.
@Suite struct ReadBackIndexValueTests {
    struct Event: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var at: Date
    }

    /// Dates as ISO 8601 text: whole seconds survive, fractions do not.
    struct ISOEvents: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "events"
        static let currentVersion = Version.one
        typealias Instance = Event
        static var recordEncoder: FolioJSONEncoder {
            var encoder = FolioJSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            return encoder
        }
        static var recordDecoder: FolioJSONDecoder {
            var decoder = FolioJSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return decoder
        }
        let at = Index(\Event.at)
    }

    /// The same records without an index: what a scan returns.
    struct ISOEventsScanned: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "scanned"
        static let currentVersion = Version.one
        typealias Instance = Event
        static var recordEncoder: FolioJSONEncoder { ISOEvents.recordEncoder }
        static var recordDecoder: FolioJSONDecoder { ISOEvents.recordDecoder }
    }

    @Test func aLossyDateStrategyIndexesTheDateAReaderDecodes() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let events = persistence.datastore(for: ISOEvents.self)
        let scanned = persistence.datastore(for: ISOEventsScanned.self)
        let event = Event(id: 1, at: Date(timeIntervalSinceReferenceDate: 100.5))
        try await events.persist(event)
        try await scanned.persist(event)
        let loaded = try #require(try await events.load(1))
        #expect(loaded.at == Date(timeIntervalSinceReferenceDate: 100), "ISO 8601 keeps whole seconds")
        let t = loaded.at
        let predicate = #Predicate<Event> { $0.at <= t }
        #expect(try await events.explain(where: predicate).access != .everyRecord, "the index serves the query")
        let scan = try await scanned.fetch(where: predicate).collect()
        #expect(scan == [loaded])
        #expect(try await events.fetch(where: predicate).collect() == scan)
        #expect(try await events.count(where: predicate) == 1)
        #expect(try await events.fetch(where: #Predicate { $0.at == t }).collect() == [loaded])
        #expect(try await events.load(t, from: \.at).collect() == [loaded], "the index holds the value a reader sees")
        #expect(try await events.load(t..., from: \.at).collect() == [loaded])
        #expect(try await events.delete(where: #Predicate { $0.at == t }) == 1)
        #expect(try await events.count() == 0)
    }

    /// A `Codable` conformance that normalises what it decodes (here: lower case).
    struct Tag: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var label: String
        init(id: Int, label: String) {
            self.id = id
            self.label = label
        }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            label = try container.decode(String.self, forKey: .label).lowercased()
        }
    }

    struct Tags: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "tags"
        static let currentVersion = Version.one
        typealias Instance = Tag
        let label = OneToOneIndex(\Tag.label)
    }

    @Test func aNormalisingCodableIndexesTheNormalisedValue() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let tags = persistence.datastore(for: Tags.self)
        try await tags.persist(Tag(id: 1, label: "Swift"))
        #expect(try await tags.load(1)?.label == "swift")
        #expect(try await tags.fetch(where: #Predicate { $0.label == "swift" }).collect().map(\.id) == [1])
        #expect(try await tags.load("swift", from: \.label)?.id == 1)
        #expect(try await tags.load("Swift", from: \.label) == nil, "no record reads back as Swift")
        // Uniqueness is over the values records read back with.
        await #expect(throws: FolioError.self) { try await tags.persist(Tag(id: 2, label: "SWIFT")) }
        #expect(try await tags.count() == 1)
    }

    struct Stamp: Codable, Identifiable, Sendable, Equatable {
        var id: Date
        var note: String
    }

    /// A date identifier under ISO 8601: an identifier that does not read back as written.
    struct Stamps: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "stamps"
        static let currentVersion = Version.one
        typealias Instance = Stamp
        static var recordEncoder: FolioJSONEncoder { ISOEvents.recordEncoder }
        static var recordDecoder: FolioJSONDecoder { ISOEvents.recordDecoder }
    }

    /// A record is stored under its identifier; one whose identifier would read back as
    /// another value could be found neither by its own nor by the one it reads back with,
    /// so it is refused, and nothing is written.
    @Test func anIdentifierThatDoesNotReadBackIsRefused() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let stamps = persistence.datastore(for: Stamps.self)
        let whole = Date(timeIntervalSinceReferenceDate: 100)
        try await stamps.persist(Stamp(id: whole, note: "whole seconds read back"))
        #expect(try await stamps.load(whole)?.note == "whole seconds read back")
        await #expect {
            try await stamps.persist(
                Stamp(id: Date(timeIntervalSinceReferenceDate: 100.5), note: "a fraction does not"))
        } throws: { error in
            guard case FolioError.encodingFailed(let datastore, _, let reason) = error else { return false }
            return datastore == "stamps" && reason.contains("identifier")
        }
        #expect(try await stamps.count() == 1)
        #expect(try await stamps.load(whole)?.note == "whole seconds read back")
    }

    struct Reading: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var value: Double
        var at: Date
        var blob: Data
        var text: String
    }

    /// Folio's own coder with its default strategies reads back exactly what it wrote, for
    /// the value types an index can hold: every bit of a `Double` and a `Date` (subnormals,
    /// -0.0, extremes), every byte of `Data`, every scalar of a `String`.
    @Test func theDefaultCoderReadsBackExactly() throws {
        var rng = SystemRandomNumberGenerator()
        let encoder = FolioJSONEncoder(), decoder = FolioJSONDecoder()
        var doubles: [Double] = [
            0, -0.0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude,
            .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 0.1, 1 / 3, 1e-300, 123456789.125, .ulpOfOne,
        ]
        for _ in 0..<5_000 {
            let bits = UInt64.random(in: .min ... .max, using: &rng)
            let double = Double(bitPattern: bits)
            if double.isFinite { doubles.append(double) }
            doubles.append(Double.random(in: -1e9...1e9, using: &rng))
        }
        let scalars = [
            "a", "é", "e\u{301}", "\u{212A}", "\u{345}\u{300}", "\u{0}", "\"", "\\", "/", "\u{1F600}", "\u{7F}", "\n",
        ]
        for (position, double) in doubles.enumerated() {
            let text = (0..<Int.random(in: 0...6, using: &rng)).map { _ in scalars.randomElement(using: &rng)! }
                .joined()
            let blob = Data(
                (0..<Int.random(in: 0...20, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
            let reading = Reading(
                id: position, value: double, at: Date(timeIntervalSinceReferenceDate: double), blob: blob, text: text)
            let back = try decoder.decode(Reading.self, from: encoder.encode(reading))
            #expect(back.value.bitPattern == double.bitPattern, "\(double)")
            #expect(back.at.timeIntervalSinceReferenceDate.bitPattern == double.bitPattern, "\(double)")
            #expect(back.blob == blob)
            #expect(Array(back.text.unicodeScalars) == Array(text.unicodeScalars))
        }
    }
}
