import Foundation
import Testing
import FolioJSON

// Hand-written types as an app writes them: synthesized conformances, optionals, nested
// structs, enums with associated values, classes that encode their superclass.

enum DiffFormat: Codable, Equatable {
    case hardcover(pages: Int, dustJacket: Bool)
    case ebook(URL?, sizeInBytes: Int64)
    case audio(Double)
    case unknown
}

struct DiffAuthor: Codable, Equatable {
    var name: String
    var born: Date?
    var nickname: String? = nil
}

struct DiffBook: Codable, Equatable {
    var id: UUID
    var title: String
    var authors: [DiffAuthor]
    var published: Date
    var isbn: String?
    var rating: Double?
    var pageCount: UInt16
    var format: DiffFormat
    var tags: Set<String>
    var cover: Data?
    var ratingsByYear: [Int: Float]
    var metadata: [String: [String: Int8]]
    var series: Series?

    struct Series: Codable, Equatable {
        var name: String
        var position: Int
        var next: [Series]
    }

    enum CodingKeys: String, CodingKey {
        case id, title, authors, published, isbn, rating, pageCount = "page_count", format, tags, cover, ratingsByYear,
            metadata, series
    }
}

class DiffAnimal: Codable, Equatable {
    var name: String
    var legs: Int8
    init(name: String, legs: Int8) {
        self.name = name
        self.legs = legs
    }
    static func == (a: DiffAnimal, b: DiffAnimal) -> Bool { a.isEqual(to: b) }
    func isEqual(to other: DiffAnimal) -> Bool {
        type(of: self) == type(of: other) && name == other.name && legs == other.legs
    }
}

/// The superclass in its own object under `"super"` (`superEncoder()`).
final class DiffDog: DiffAnimal {
    var breed: String
    var goodBoy: Bool?
    init(name: String, breed: String, goodBoy: Bool?) {
        self.breed = breed
        self.goodBoy = goodBoy
        super.init(name: name, legs: 4)
    }
    enum CodingKeys: String, CodingKey { case breed, goodBoy }
    required init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        breed = try c.decode(String.self, forKey: .breed)
        goodBoy = try c.decodeIfPresent(Bool.self, forKey: .goodBoy)
        try super.init(from: c.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(breed, forKey: .breed)
        try c.encodeIfPresent(goodBoy, forKey: .goodBoy)
        try super.encode(to: c.superEncoder())
    }
    override func isEqual(to other: DiffAnimal) -> Bool {
        guard let other = other as? DiffDog else { return false }
        return super.isEqual(to: other) && breed == other.breed && goodBoy == other.goodBoy
    }
}

/// The superclass in the same object (`super.encode(to: encoder)`: two requests for a keyed
/// container of one encoder, which Foundation merges).
final class DiffBird: DiffAnimal {
    var wingspan: Float
    var song: [String]
    init(name: String, wingspan: Float, song: [String]) {
        self.wingspan = wingspan
        self.song = song
        super.init(name: name, legs: 2)
    }
    enum CodingKeys: String, CodingKey { case wingspan, song }
    required init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        wingspan = try c.decode(Float.self, forKey: .wingspan)
        song = try c.decode([String].self, forKey: .song)
        try super.init(from: decoder)
    }
    override func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(wingspan, forKey: .wingspan)
        try c.encode(song, forKey: .song)
        try super.encode(to: encoder)
    }
    override func isEqual(to other: DiffAnimal) -> Bool {
        guard let other = other as? DiffBird else { return false }
        return super.isEqual(to: other) && wingspan.bitPattern == other.wingspan.bitPattern && song == other.song
    }
}

/// The superclass under a custom key (`superEncoder(forKey:)`) and in an unkeyed container.
final class DiffZoo: Codable, Equatable {
    var dogs: [DiffDog]
    var birds: [DiffBird?]
    var keeper: DiffAnimal
    init(dogs: [DiffDog], birds: [DiffBird?], keeper: DiffAnimal) {
        self.dogs = dogs
        self.birds = birds
        self.keeper = keeper
    }
    enum CodingKeys: String, CodingKey { case dogs, birds, keeper, parent }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        dogs = try c.decode([DiffDog].self, forKey: .dogs)
        birds = try c.decode([DiffBird?].self, forKey: .birds)
        var unkeyed = try c.superDecoder(forKey: .parent).unkeyedContainer()
        keeper = try DiffAnimal(from: unkeyed.superDecoder())
        #expect(unkeyed.isAtEnd)
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(dogs, forKey: .dogs)
        try c.encode(birds, forKey: .birds)
        var unkeyed = c.superEncoder(forKey: .parent).unkeyedContainer()
        try keeper.encode(to: unkeyed.superEncoder())
    }
    static func == (a: DiffZoo, b: DiffZoo) -> Bool { a.dogs == b.dogs && a.birds == b.birds && a.keeper == b.keeper }
}

enum DiffRealistic {
    static func book(_ random: inout DiffRandom) -> DiffBook {
        var g = DiffGenerator(seed: random.next())
        func series(_ depth: Int) -> DiffBook.Series {
            DiffBook.Series(
                name: g.string(), position: g.integer(Int.self),
                next: depth == 0 ? [] : (0..<g.random.below(3)).map { _ in series(depth - 1) })
        }
        let formats: [DiffFormat] = [
            .hardcover(pages: g.integer(Int.self), dustJacket: g.random.chance(1, in: 2)),
            .ebook(
                g.random.chance(1, in: 2)
                    ? nil
                    : URL(
                        string: g.random.pick([
                            "https://example.com/a?b=c&d=%20#f", "file:///tmp/x%20y", "urn:isbn:0451450523",
                            "https://ü.example/😀",
                        ])),
                sizeInBytes: g.integer(Int64.self)),
            .audio(g.double()), .unknown,
        ]
        return DiffBook(
            id: UUID(
                uuid: (0..<16).reduce(into: UUID().uuid) { uuid, i in
                    withUnsafeMutableBytes(of: &uuid) { $0[i] = UInt8(truncatingIfNeeded: g.random.next()) }
                }),
            title: g.string(),
            authors: (0..<g.random.below(4)).map { _ in
                DiffAuthor(
                    name: g.string(), born: g.random.chance(1, in: 2) ? g.date() : nil,
                    nickname: g.random.chance(1, in: 3) ? g.string() : nil)
            },
            published: g.date(),
            isbn: g.random.chance(1, in: 2) ? g.string() : nil,
            rating: g.random.chance(1, in: 2) ? g.double() : nil,
            pageCount: g.integer(UInt16.self),
            format: g.random.pick(formats),
            tags: Set((0..<g.random.below(4)).map { _ in g.string() }),
            cover: g.random.chance(1, in: 2)
                ? Data((0..<g.random.below(40)).map { _ in UInt8(truncatingIfNeeded: g.random.next()) }) : nil,
            ratingsByYear: Dictionary(
                (0..<g.random.below(4)).map { _ in (g.integer(Int.self), g.float()) }, uniquingKeysWith: { a, _ in a }),
            metadata: Dictionary(
                (0..<g.random.below(3)).map { _ in
                    (
                        g.string(),
                        Dictionary(
                            (0..<g.random.below(3)).map { _ in (g.string(), g.integer(Int8.self)) },
                            uniquingKeysWith: { a, _ in a })
                    )
                },
                uniquingKeysWith: { a, _ in a }),
            series: g.random.chance(1, in: 2) ? series(3) : nil)
    }

    static func zoo(_ random: inout DiffRandom) -> DiffZoo {
        var g = DiffGenerator(seed: random.next())
        return DiffZoo(
            dogs: (0..<g.random.below(3)).map { _ in
                DiffDog(
                    name: g.string(), breed: g.string(),
                    goodBoy: g.random.chance(1, in: 3) ? nil : g.random.chance(1, in: 2))
            },
            birds: (0..<g.random.below(3)).map { _ in
                g.random.chance(1, in: 4)
                    ? nil
                    : DiffBird(
                        name: g.string(), wingspan: g.float(), song: (0..<g.random.below(3)).map { _ in g.string() })
            },
            keeper: DiffAnimal(name: g.string(), legs: g.integer(Int8.self)))
    }

    /// Reference → subject, subject → reference, subject → subject, and the same JSON tree.
    static func check<T: Codable & Equatable>(
        _ value: T, subject: DiffCoder, reference: DiffCoder, strategies: DiffStrategies = DiffStrategies(),
        place: String, report: DiffReport
    ) {
        let subject = subject.with(strategies), reference = reference.with(strategies)
        do {
            let r = try reference.encode(value)
            let s: [UInt8]
            do { s = try subject.encode(value) } catch {
                report.fail("\(place): \(subject) encode threw \(error)\n  value: \(value)")
                return
            }
            for (from, bytes, to) in [(reference, r, subject), (subject, s, reference), (subject, s, subject)] {
                switch DiffOutcome({ try to.decode(T.self, from: bytes) }) {
                case .value(let decoded) where decoded != value:
                    report.fail(
                        "\(place): \(from) → \(to) decoded \(decoded)\n  value: \(value)\n  json: \(jsonText(bytes))")
                case .failure(let error):
                    report.fail("\(place): \(from) → \(to) threw \(error)\n  json: \(jsonText(bytes))")
                default: break
                }
            }
            let plain = DiffCoder.foundation
            if let rt = try? plain.decode(DiffAnyJSON.self, from: r),
                rt != (try? plain.decode(DiffAnyJSON.self, from: s))
            {
                report.fail("\(place): different JSON\n  \(reference): \(jsonText(r))\n  \(subject): \(jsonText(s))")
            }
        } catch {
            report.fail("\(place): \(reference) encode threw \(error)")
        }
    }
}

@Suite("Differential realistic types") struct DifferentialRealisticTypeTests {
    @Test func books() {
        let report = DiffReport("books")
        var random = DiffRandom(seed: DiffBudget.seed &+ 21)
        for i in 0..<DiffBudget.count(600) where !report.shouldStop {
            let book = DiffRealistic.book(&random)
            DiffRealistic.check(
                book, subject: .folio, reference: .foundation, place: "book #\(i) (FOLIO_JSON_SEED=\(DiffBudget.seed))",
                report: report)
        }
        recordDiff(report)
    }

    @Test(arguments: [
        DiffStrategies(date: .iso8601, data: .deferred),
        DiffStrategies(date: .milliseconds, floats: ["inf", "-inf", "nan"]),
        DiffStrategies(date: .seconds, data: .base64),
    ])
    func booksWithStrategies(strategies: DiffStrategies) {
        let report = DiffReport("books with \(strategies)")
        var random = DiffRandom(seed: DiffBudget.seed &+ 22)
        for i in 0..<DiffBudget.count(200) where !report.shouldStop {
            var book = DiffRealistic.book(&random)
            // Values these strategies carry exactly: whole seconds, milliseconds.
            book.published = Date(
                timeIntervalSince1970: book.published.timeIntervalSince1970.rounded(.down).clamped(-1e10, 1e10))
            book.authors = book.authors.map {
                var a = $0; a.born = nil; return a
            }
            DiffRealistic.check(
                book, subject: .folio, reference: .foundation, strategies: strategies,
                place: "book #\(i) with \(strategies)", report: report)
        }
        recordDiff(report)
    }

    @Test func classesWithSuperclasses() {
        let report = DiffReport("classes")
        var random = DiffRandom(seed: DiffBudget.seed &+ 23)
        for i in 0..<DiffBudget.count(600) where !report.shouldStop {
            DiffRealistic.check(
                DiffRealistic.zoo(&random), subject: .folio, reference: .foundation,
                place: "zoo #\(i) (FOLIO_JSON_SEED=\(DiffBudget.seed))", report: report)
        }
        recordDiff(report)
    }

    /// Types Foundation's coders treat specially: URL as a string, Decimal as a number.
    @Test func foundationSpecialTypes() {
        let report = DiffReport("special types")
        let urls = [
            "https://example.com/a?b=c#d", "file:///tmp/x%20y", "relative/path", "urn:x", "https://ü.example/😀",
        ].compactMap { URL(string: $0) }
        DiffRealistic.check(urls, subject: .folio, reference: .foundation, place: "[URL]", report: report)
        let decimals: [Decimal] = [
            0, 1, -1, Decimal(string: "3.14159265358979323846264338327950288")!, Decimal(string: "1e-100")!,
            Decimal(string: "-12345678901234567890.5")!, Decimal(Double.pi),
        ]
        DiffRealistic.check(decimals, subject: .folio, reference: .foundation, place: "[Decimal]", report: report)
        DiffRealistic.check(
            ["a": UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!], subject: .folio, reference: .foundation,
            place: "[String: UUID]", report: report)
        recordDiff(report)
    }
}

extension Double {
    func clamped(_ low: Double, _ high: Double) -> Double { Swift.min(Swift.max(self, low), high) }
}
