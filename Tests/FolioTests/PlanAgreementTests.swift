import Testing
import Foundation
import Folio
import FolioTestSupport

/// Where an index's key order and Swift's comparison of the values could disagree, a query
/// still returns what evaluating its predicate on every record returns: strings that are not
/// in normal form against `<`, canonically equivalent strings against `==`, -0.0 against
/// 0.0, and a type whose `<` is its own.
@Suite struct PlanAgreementTests {
    struct Person: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var name: String
        var weight: Double = 0
        var priority: Priority = .low
    }

    /// Ordered by declaration, not by raw value: its keys (the raw values') order otherwise.
    enum Priority: String, Codable, Sendable, KeyComponent, Comparable {
        case low = "zz", medium = "mm", high = "aa"
        static func < (a: Priority, b: Priority) -> Bool { a.rank < b.rank }
        var rank: Int { [.low: 0, .medium: 1, .high: 2][self]! }
    }

    struct People: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "people"
        static let currentVersion = Version.one
        typealias Instance = Person
        let name = Index(\Person.name)
        let weight = Index(\Person.weight)
        let priority = Index(\Person.priority)
        let nameAndPriority = Index(\Person.priority, \Person.name)
    }

    static func expectAgreement(
        _ people: Datastore<People, ReadWrite>, _ all: [Person], _ predicate: Predicate<Person>,
        _ context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let want = try all.filter { try predicate.evaluate($0) }.map(\.id).sorted()
        let got = try await people.fetch(where: predicate).collect().map(\.id)
        if got != want {
            let plan = try await people.explain(where: predicate)
            Issue.record("\(context): got \(got), want \(want); plan: \(plan)", sourceLocation: sourceLocation)
        }
        #expect(try await people.count(where: predicate) == want.count, "\(context)", sourceLocation: sourceLocation)
    }

    /// A stored `"\u{345}\u{300}"` is `>= "\u{345}"` by Swift's `<`, but its
    /// key (the normal form, U+0300 U+0345) sorts below the bound's.
    @Test func aStringRangeFindsWhatTheRecordSaysMatches() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let people = persistence.datastore(for: People.self)
        let all = [
            Person(id: 1, name: "\u{345}\u{300}"), Person(id: 2, name: "\u{212A}"), Person(id: 3, name: "KA"),
            Person(id: 4, name: "K"), Person(id: 5, name: "\u{37E}"),
        ]
        for person in all { try await people.persist(person) }
        #expect(try await people.fetch(where: #Predicate { $0.name >= "\u{345}" }).collect().map(\.id) == [1])
        // An ASCII bound still reads the index: the Kelvin sign (normal form "K") is
        // `>= "KA"` and `> "KA"` by Swift's `<`, and is found.
        #expect("\u{212A}" >= "KA" && "KA" < "\u{212A}", "Swift's comparison, as the test assumes it")
        let kelvin = #Predicate<Person> { $0.name >= "KA" }
        #expect(try await people.explain(where: kelvin).access != .everyRecord)
        try await Self.expectAgreement(people, all, kelvin, ">= KA")
        try await Self.expectAgreement(people, all, #Predicate { $0.name > "KA" }, "> KA")
        try await Self.expectAgreement(people, all, #Predicate { $0.name > ";a" }, "> ;a")
        let low = Priority.low
        try await Self.expectAgreement(people, all, #Predicate { $0.priority == low && $0.name >= "KA" }, "composite")
    }

    static let pieces = [
        "a", "K", "A", "\u{212A}", "e", "\u{301}", "\u{E9}", "\u{345}", "\u{300}", "\u{F71}", "\u{F72}", "\u{F73}",
        ";", "\u{37E}", "`", "\u{1FEF}", "\u{391}", "\u{386}", "\u{1100}", "\u{1161}", "\u{AC00}", "z", "\u{0}",
    ]

    static func text(_ rng: inout SplitMix64) -> String {
        (0..<Int(rng.next() % 4)).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
    }

    /// Random strings made of pieces that compose, reorder, normalise to ASCII (the Kelvin
    /// sign, the Greek question mark) or are Swift's known exceptions (U+0F73), against random
    /// bounds (ASCII or not) in every comparison the planner reads.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomStringRangesAgreeWithEvaluatingEveryRecord(seed: UInt64) async throws {
        var rng = SplitMix64(seed: seed)
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let people = persistence.datastore(for: People.self)
        var all: [Person] = []
        try await persistence.perform {
            for id in 0..<300 {
                let person = Person(
                    id: id, name: Self.text(&rng), priority: [.low, .medium, .high][Int(rng.next() % 3)])
                all.append(person)
                try await people.persist(person)
            }
        }
        let ascii = ["K", "KA", "Ka", "a", "e", ";", ";a", "`", "`a", "A", "z", "", "\u{0}", "K\u{0}"]
        for round in 0..<40 {
            let b = rng.next() % 2 == 0 ? ascii[Int(rng.next() % UInt64(ascii.count))] : Self.text(&rng)
            let c = rng.next() % 2 == 0 ? ascii[Int(rng.next() % UInt64(ascii.count))] : Self.text(&rng)
            let (low, high) = b < c ? (b, c) : (c, b)
            let p = Priority.medium
            let context =
                "seed \(seed) round \(round), bounds \(b.unicodeScalars.map { String($0.value, radix: 16) }) "
                + "\(c.unicodeScalars.map { String($0.value, radix: 16) })"
            try await Self.expectAgreement(people, all, #Predicate { $0.name < b }, "< \(context)")
            try await Self.expectAgreement(people, all, #Predicate { $0.name <= b }, "<= \(context)")
            try await Self.expectAgreement(people, all, #Predicate { $0.name > b }, "> \(context)")
            try await Self.expectAgreement(people, all, #Predicate { $0.name >= b }, ">= \(context)")
            try await Self.expectAgreement(people, all, #Predicate { b < $0.name }, "b < name \(context)")
            try await Self.expectAgreement(people, all, #Predicate { $0.name == b }, "== \(context)")
            try await Self.expectAgreement(people, all, #Predicate { $0.name.starts(with: b) }, "prefix \(context)")
            try await Self.expectAgreement(people, all, #Predicate { (low..<high).contains($0.name) }, "..< \(context)")
            try await Self.expectAgreement(people, all, #Predicate { (low...high).contains($0.name) }, "... \(context)")
            try await Self.expectAgreement(
                people, all, #Predicate { $0.name >= b && $0.name < c }, ">= && < \(context)")
            try await Self.expectAgreement(
                people, all, #Predicate { $0.priority == p && $0.name > b }, "composite \(context)")
            try await Self.expectAgreement(
                people, all, #Predicate { $0.priority == p && $0.name <= b }, "composite <= \(context)")
        }
    }

    /// Swift's `==` on strings is canonical equivalence, and so is key equality (keys hold the
    /// normal form): an equality read through an index finds every equivalent spelling.
    @Test func stringEqualityThroughAnIndexIsCanonicalEquivalence() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let people = persistence.datastore(for: People.self)
        let spellings = [
            ["\u{E9}", "e\u{301}"], ["\u{212A}", "K"], ["\u{2126}", "\u{3A9}"], ["\u{345}\u{300}", "\u{300}\u{345}"],
            ["\u{F73}", "\u{F71}\u{F72}"], ["\u{AC00}", "\u{1100}\u{1161}"], ["\u{37E}", ";"],
            ["\u{212B}", "\u{C5}", "A\u{30A}"],
        ]
        var all: [Person] = []
        for (group, names) in spellings.enumerated() {
            for (position, name) in names.enumerated() {
                let person = Person(id: group * 10 + position, name: name)
                all.append(person)
                try await people.persist(person)
            }
        }
        for names in spellings {
            for name in names {
                let predicate = #Predicate<Person> { $0.name == name }
                #expect(try await people.explain(where: predicate).access != .everyRecord)
                try await Self.expectAgreement(people, all, predicate, "== \(name.unicodeScalars.map(\.value))")
                #expect(
                    try await people.load(name, from: \.name).collect().count == names.count,
                    "every spelling is one key")
            }
        }
    }

    /// Keys canonicalise -0.0 to 0.0, as `==` equates them: every comparison with either reads
    /// what evaluating it on the records gives.
    @Test func negativeZeroAndZeroAgreeWithEvaluatingEveryRecord() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let people = persistence.datastore(for: People.self)
        let weights: [Double] = [
            -0.0, 0.0, -1, 1, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude,
        ]
        let all = weights.enumerated().map { Person(id: $0.offset, name: "", weight: $0.element) }
        for person in all { try await people.persist(person) }
        for bound in [-0.0, 0.0] {
            try await Self.expectAgreement(people, all, #Predicate { $0.weight == bound }, "== \(bound)")
            try await Self.expectAgreement(people, all, #Predicate { $0.weight < bound }, "< \(bound)")
            try await Self.expectAgreement(people, all, #Predicate { $0.weight <= bound }, "<= \(bound)")
            try await Self.expectAgreement(people, all, #Predicate { $0.weight > bound }, "> \(bound)")
            try await Self.expectAgreement(people, all, #Predicate { $0.weight >= bound }, ">= \(bound)")
        }
        let sorted = try await people.fetch(sortBy: [SortDescriptor(\.weight)]).collect().map(\.weight)
        #expect(sorted == weights.sorted(), "sorted as `<` sorts")
    }

    /// A key type whose `<` is not its key order (an enum ordered by declaration, keyed by its
    /// raw values): a range over it is evaluated on the records, not read from the index.
    @Test func aTypeWithItsOwnOrderIsNotReadAsARange() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let people = persistence.datastore(for: People.self)
        let all = [
            Person(id: 1, name: "a", priority: .low), Person(id: 2, name: "b", priority: .medium),
            Person(id: 3, name: "c", priority: .high),
        ]
        for person in all { try await people.persist(person) }
        let high = Priority.high, medium = Priority.medium
        try await Self.expectAgreement(people, all, #Predicate { $0.priority < high }, "< high")
        try await Self.expectAgreement(people, all, #Predicate { $0.priority >= medium }, ">= medium")
        try await Self.expectAgreement(people, all, #Predicate { $0.priority == medium }, "== medium")
        #expect(
            try await people.explain(where: #Predicate { $0.priority == medium }).access != .everyRecord,
            "equality is key equality for a raw-value enum")
    }
}
