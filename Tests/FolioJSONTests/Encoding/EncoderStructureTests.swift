import Foundation
import FolioTestSupport
import Testing
import FolioJSON

// Types for the structure tests (file-private names, so other suites may reuse them).

private struct EncPerson: Codable, Equatable {
    var name: String
    var age: Int
    var email: String?
    var tags: [String]
    var scores: [String: Double]
    var byNumber: [Int: String]
    var friends: [EncPerson]
}

private indirect enum EncShape: Codable, Equatable {
    case circle(radius: Double)
    case rectangle(Double, Double)
    case labelled(name: String, EncShape?)
    case empty
}

private class EncAnimal: Codable {
    var name: String
    init(name: String) { self.name = name }
}

/// Writes its superclass's keys into the same object (shares the encoder).
private final class EncDog: EncAnimal {
    var breed: String
    init(name: String, breed: String) { self.breed = breed; super.init(name: name) }
    enum CodingKeys: String, CodingKey { case breed }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        breed = try container.decode(String.self, forKey: .breed)
        try super.init(from: decoder)
    }
    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(breed, forKey: .breed)
    }
}

/// Writes its superclass under `"super"`, after its own keys.
private final class EncCat: EncAnimal {
    var lives: Int
    init(name: String, lives: Int) { self.lives = lives; super.init(name: name) }
    enum CodingKeys: String, CodingKey { case lives }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        lives = try container.decode(Int.self, forKey: .lives)
        try super.init(from: container.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(lives, forKey: .lives)
        try super.encode(to: container.superEncoder())
    }
}

/// Runs `body` as its `encode(to:)`.
private struct EncCustom: Encodable {
    let body: @Sendable (any Encoder) throws -> Void
    func encode(to encoder: any Encoder) throws { try body(encoder) }
}

private func encKey(_ name: String) -> EncKey { EncKey(name) }

/// Parses JSON text with Foundation, for comparing documents regardless of key order.
private func encParsed(_ text: String) throws -> NSObject {
    try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) as! NSObject
}

@Suite struct EncoderStructureTests {
    @Test func nestedStructsArraysAndDictionaries() throws {
        let leaf = EncPerson(name: "Leaf", age: 3, email: nil, tags: [], scores: [:], byNumber: [:], friends: [])
        let person = EncPerson(
            name: "Ada", age: 36, email: "ada@example.com", tags: ["math", "engines"],
            scores: ["b": 2.5, "a": 1, "c": -0.5], byNumber: [3: "three", -1: "minus one", 20: "twenty"],
            friends: [leaf, leaf])
        try expectEncRoundTrip(person)
        try expectEncSameAsFoundation(person)
        #expect(try encFolioText(leaf) == #"{"name":"Leaf","age":3,"tags":[],"scores":{},"byNumber":{},"friends":[]}"#)
    }

    @Test func enumsWithAssociatedValues() throws {
        let shapes: [EncShape] = [
            .circle(radius: 2), .rectangle(3, 4), .labelled(name: "n", .circle(radius: 1)),
            .labelled(name: "none", nil), .empty,
        ]
        try expectEncRoundTrip(shapes)
        try expectEncSameAsFoundation(shapes)
        #expect(try encFolioText(EncShape.rectangle(3, 4)) == #"{"rectangle":{"_0":3,"_1":4}}"#)
        #expect(try encFolioText(EncShape.empty) == #"{"empty":{}}"#)
    }

    @Test func classInheritance() throws {
        let dog = EncDog(name: "Rex", breed: "collie")
        #expect(try encFolioText(dog) == #"{"name":"Rex","breed":"collie"}"#)
        let decodedDog = try JSONDecoder().decode(EncDog.self, from: Data(try FolioJSONEncoder().encode(dog)))
        #expect(decodedDog.name == "Rex" && decodedDog.breed == "collie")
        let cat = EncCat(name: "Tom", lives: 9)
        #expect(try encFolioText(cat) == #"{"lives":9,"super":{"name":"Tom"}}"#)
        let decodedCat = try JSONDecoder().decode(EncCat.self, from: Data(try FolioJSONEncoder().encode(cat)))
        #expect(decodedCat.name == "Tom" && decodedCat.lives == 9)
        try expectEncSameAsFoundation([cat, cat])
    }

    @Test func emptyContainers() throws {
        let keyed = EncCustom { _ = $0.container(keyedBy: EncKey.self) }
        let unkeyed = EncCustom { _ = $0.unkeyedContainer() }
        let nothing = EncCustom { _ in }
        let singleUnused = EncCustom { _ = $0.singleValueContainer() }
        #expect(try encFolioText(keyed) == "{}")
        #expect(try encFolioText(unkeyed) == "[]")
        #expect(try encFolioText(["a": nothing]) == #"{"a":{}}"#)
        #expect(try encFolioText([singleUnused]) == "[{}]")
        let nestedEmpty = EncCustom { encoder in
            var container = encoder.container(keyedBy: EncKey.self)
            _ = container.nestedContainer(keyedBy: EncKey.self, forKey: encKey("k"))
            _ = container.nestedUnkeyedContainer(forKey: encKey("u"))
            _ = container.superEncoder()
        }
        #expect(try encFolioText(nestedEmpty) == #"{"k":{},"u":[],"super":{}}"#)
        try expectEncSameAsFoundation(nestedEmpty)
        // Foundation refuses a top-level value that writes nothing.
        for value in [nothing, singleUnused] {
            #expect(throws: EncodingError.self) { _ = try FolioJSONEncoder().encode(value) }
            #expect(throws: EncodingError.self) { _ = try JSONEncoder().encode(value) }
        }
    }

    @Test func nestedContainersWrittenOutOfOrder() throws {
        // The parent writes while its nested containers are still in use.
        let interleaved = EncCustom { encoder in
            var container = encoder.container(keyedBy: EncKey.self)
            var list = container.nestedUnkeyedContainer(forKey: encKey("list"))
            var object = container.nestedContainer(keyedBy: EncKey.self, forKey: encKey("object"))
            try container.encode(1, forKey: encKey("one"))
            try list.encode(10)
            try object.encode("x", forKey: encKey("x"))
            var deeper = list.nestedContainer(keyedBy: EncKey.self)
            try list.encode(20)
            try deeper.encode(true, forKey: encKey("deep"))
            try container.encode(2, forKey: encKey("two"))
            try list.encode(30)
        }
        let text = try encFolioText(interleaved)
        #expect(
            try encParsed(text) == encParsed(#"{"list":[10,{"deep":true},20,30],"object":{"x":"x"},"one":1,"two":2}"#))
        #expect(text == #"{"list":[10,{"deep":true},20,30],"object":{"x":"x"},"one":1,"two":2}"#)
        try expectEncSameAsFoundation(interleaved)

        // A superEncoder used after its parent wrote on.
        let lateSuper = EncCustom { encoder in
            var container = encoder.container(keyedBy: EncKey.self)
            let parentEncoder = container.superEncoder()
            let named = container.superEncoder(forKey: encKey("named"))
            try container.encode("after", forKey: encKey("after"))
            var single = parentEncoder.singleValueContainer()
            try single.encode([1, 2])
            var namedContainer = named.container(keyedBy: EncKey.self)
            try namedContainer.encode(3, forKey: encKey("n"))
        }
        #expect(try encFolioText(lateSuper) == #"{"super":[1,2],"named":{"n":3},"after":"after"}"#)
        try expectEncSameAsFoundation(lateSuper)

        // Out-of-order writes deep inside an array of a dictionary still round-trip.
        let wrapped = ["outer": [interleaved, lateSuper]]
        let reference = try encFoundationText(wrapped)
        #expect(try encParsed(encFolioText(wrapped)) == encParsed(reference))
    }

    @Test func largeObjectsWrittenOutOfOrder() throws {
        // The tree fallback with many keys, some written twice (the last value wins, in
        // the first one's place, as Foundation's encoder keeps the last).
        let large = EncCustom { encoder in
            var container = encoder.container(keyedBy: EncKey.self)
            var late = container.nestedContainer(keyedBy: EncKey.self, forKey: encKey("late"))
            for number in 0..<100 { try container.encode(number, forKey: encKey("k\(number % 60)")) }
            try late.encode("written last", forKey: encKey("x"))
        }
        let text = try encFolioText(large)
        #expect(try encParsed(text) == encParsed(try encFoundationText(large)))
        #expect(text.hasPrefix(#"{"late":{"x":"written last"},"k0":60,"k1":61,"#))
        #expect(text.hasSuffix(#""k59":59}"#))
    }

    @Test func containersAskedForAgain() throws {
        let twice = EncCustom { encoder in
            var first = encoder.container(keyedBy: EncKey.self)
            try first.encode(1, forKey: encKey("a"))
            var nested = first.nestedContainer(keyedBy: EncKey.self, forKey: encKey("n"))
            var second = encoder.container(keyedBy: EncKey.self)
            try second.encode(2, forKey: encKey("b"))
            try first.encode(3, forKey: encKey("c"))
            try nested.encode(4, forKey: encKey("late"))
        }
        try expectEncSameAsFoundation(twice)
        let unkeyedTwice = EncCustom { encoder in
            var first = encoder.unkeyedContainer()
            try first.encode(1)
            var second = encoder.unkeyedContainer()
            try second.encode(2)
            try first.encode(3)
            #expect(first.count == 3 && second.count == 3)
        }
        #expect(try encFolioText(unkeyedTwice) == "[1,2,3]")
        try expectEncSameAsFoundation(unkeyedTwice)
    }

    @Test func singleValueContainersHoldAnyValue() throws {
        struct Wrapper: Encodable {
            let inner: EncPerson
            func encode(to encoder: any Encoder) throws {
                var single = encoder.singleValueContainer()
                try single.encode(inner)
            }
        }
        let person = EncPerson(
            name: "p", age: 1, email: nil, tags: ["t"], scores: ["s": 1], byNumber: [1: "1"], friends: [])
        #expect(try encFolioText(Wrapper(inner: person)) == (try encFolioText(person)))
        try expectEncSameAsFoundation([Wrapper(inner: person)])
        let date = EncCustom { encoder in
            var single = encoder.singleValueContainer()
            try single.encode(Date(timeIntervalSince1970: 0))
        }
        #expect(try encFolioText(date) { $0.dateEncodingStrategy = .iso8601 } == #""1970-01-01T00:00:00Z""#)
    }

    @Test func errorsCaughtInsideTheValue() throws {
        // The value swallows an error from a nested encode and carries on; the bytes the
        // failed encode began must not remain.
        struct Bad: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: EncKey.self)
                try container.encode(1, forKey: encKey("x"))
                throw CancellationError()
            }
        }
        let forgiving = EncCustom { encoder in
            var container = encoder.container(keyedBy: EncKey.self)
            try container.encode(1, forKey: encKey("before"))
            try? container.encode(Double.nan, forKey: encKey("nan"))
            try? container.encode(Bad(), forKey: encKey("bad"))
            var list = container.nestedUnkeyedContainer(forKey: encKey("list"))
            try? list.encode(Bad())
            try list.encode(5)
            try container.encode(2, forKey: encKey("after"))
        }
        let text = try encFolioText(forgiving)
        #expect(try encParsed(text) == encParsed(try encFoundationText(forgiving)))
        #expect(text == #"{"before":1,"list":[5],"after":2}"#)
    }

    @Test func failedEncodeLeavesTheBufferAsItWas() throws {
        var bytes: [UInt8] = Array("header:".utf8)
        let encoder = FolioJSONEncoder()
        #expect(throws: EncodingError.self) {
            try encoder.encode(["a": [1, .nan]] as [String: [Double]], appendingTo: &bytes)
        }
        #expect(bytes == Array("header:".utf8))
        #expect(throws: CancellationError.self) {
            try encoder.encode(EncCustom { _ in throw CancellationError() }, appendingTo: &bytes)
        }
        #expect(bytes == Array("header:".utf8))
        try encoder.encode([1, 2], appendingTo: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "header:[1,2]")
    }

    @Test func codingPathsMatchFoundation() throws {
        final class Log: @unchecked Sendable { var lines: [String] = [] }
        func render(_ path: [any CodingKey]) -> String {
            path.map { "\($0.stringValue)#\($0.intValue.map(String.init) ?? "-")" }.joined(separator: "/")
        }
        struct Leaf: Encodable {
            let log: Log
            func encode(to encoder: any Encoder) throws {
                log.lines.append("leaf " + render(encoder.codingPath))
                var single = encoder.singleValueContainer()
                log.lines.append("single " + render(single.codingPath))
                try single.encode(1)
            }
        }
        struct Probe: Encodable {
            let log: Log
            func encode(to encoder: any Encoder) throws {
                log.lines.append("top " + render(encoder.codingPath))
                var container = encoder.container(keyedBy: EncKey.self)
                log.lines.append("keyed " + render(container.codingPath))
                try container.encode(Leaf(log: log), forKey: encKey("leaf"))
                var list = container.nestedUnkeyedContainer(forKey: encKey("list"))
                log.lines.append("list " + render(list.codingPath))
                try list.encode(Leaf(log: log))
                try list.encode([Leaf(log: log), Leaf(log: log)])
                var inList = list.nestedContainer(keyedBy: EncKey.self)
                log.lines.append("inList " + render(inList.codingPath))
                try inList.encode(Leaf(log: log), forKey: encKey("deep"))
                let superEncoder = container.superEncoder()
                log.lines.append("super " + render(superEncoder.codingPath))
                var superSingle = superEncoder.singleValueContainer()
                try superSingle.encode(Leaf(log: log))
                try container.encode(["k": Leaf(log: log)], forKey: encKey("dict"))
                try container.encode([7: Leaf(log: log)], forKey: encKey("intDict"))
            }
        }
        let folioLog = Log(), foundationLog = Log()
        _ = try FolioJSONEncoder().encode(["root": [Probe(log: folioLog)]])
        _ = try JSONEncoder().encode(["root": [Probe(log: foundationLog)]])
        let expected = [
            "top root#-/Index 0#0", "keyed root#-/Index 0#0",
            "leaf root#-/Index 0#0/leaf#-", "single root#-/Index 0#0/leaf#-",
            "list root#-/Index 0#0/list#-",
            "leaf root#-/Index 0#0/list#-/Index 0#0", "single root#-/Index 0#0/list#-/Index 0#0",
            "leaf root#-/Index 0#0/list#-/Index 1#1/Index 0#0", "single root#-/Index 0#0/list#-/Index 1#1/Index 0#0",
            "leaf root#-/Index 0#0/list#-/Index 1#1/Index 1#1", "single root#-/Index 0#0/list#-/Index 1#1/Index 1#1",
            "inList root#-/Index 0#0/list#-/Index 2#2",
            "leaf root#-/Index 0#0/list#-/Index 2#2/deep#-", "single root#-/Index 0#0/list#-/Index 2#2/deep#-",
            "super root#-/Index 0#0/super#-", "leaf root#-/Index 0#0/super#-", "single root#-/Index 0#0/super#-",
            "leaf root#-/Index 0#0/dict#-/k#-", "single root#-/Index 0#0/dict#-/k#-",
            "leaf root#-/Index 0#0/intDict#-/7#7", "single root#-/Index 0#0/intDict#-/7#7",
        ]
        #expect(folioLog.lines == expected)
        // Foundation agrees, except that it leaves a nested container's own key out of
        // the paths of values encoded into it (`root/Index 0/Index 0` for the first list
        // element): Folio keeps it, as the `Encoder` documentation describes.
        #expect(foundationLog.lines.count == expected.count)
        for (line, foundationLine) in zip(expected, foundationLog.lines) where !line.contains("list#-/") {
            #expect(line == foundationLine)
        }
    }

    @Test func userInfoReachesTheValue() throws {
        let key = CodingUserInfoKey(rawValue: "folio.test")!
        let probe = EncCustom { encoder in
            var single = encoder.singleValueContainer()
            try single.encode(encoder.userInfo[key] as? String ?? "missing")
        }
        var encoder = FolioJSONEncoder()
        encoder.userInfo[key] = "present"
        #expect(String(decoding: try encoder.encode([probe]), as: UTF8.self) == #"["present"]"#)
    }

    @Test func outputIsDeterministic() throws {
        var first: [String: Int] = [:]
        var second: [String: Int] = [:]
        for number in 0..<200 { first["key\(number)"] = number }
        for number in (0..<200).reversed() { second["key\(number)"] = number }
        for number in 200..<400 { second["key\(number)"] = number }
        for number in 200..<400 { second["key\(number)"] = nil }
        #expect(first == second)
        let encoder = FolioJSONEncoder()
        #expect(try encoder.encode(first) == encoder.encode(second))
        #expect(try encoder.encode([1: first, 2: second]) == encoder.encode([2: second, 1: first]))
        let person = EncPerson(
            name: "a", age: 1, email: nil, tags: [], scores: ["x": 1, "y": 2, "z": 3], byNumber: [5: "5", 1: "1"],
            friends: [])
        #expect(try encoder.encode(person) == encoder.encode(person))
        #expect(try encFolioText([3: "c", -1: "a", 20: "b"]) == #"{"-1":"a","3":"c","20":"b"}"#)
    }

    @Test func otherCollections() throws {
        enum Color: String, Codable, CodingKeyRepresentable { case red, darkBlue }
        try expectEncRoundTrip([1.5: "a", -2: "b"] as [Double: String])
        try expectEncSameAsFoundation([2.5: "x"] as [Double: String], bytes: true)
        try expectEncRoundTrip([Color.red: 1, .darkBlue: 2])
        try expectEncSameAsFoundation([Color.darkBlue: 2], EncStrategies(snakeCase: true), bytes: true)
        try expectEncRoundTrip(Set([1, 2, 3]))
        try expectEncRoundTrip(ContiguousArray(["a", "b"]))
        try expectEncRoundTrip([[1, 2], [], [3]])
        try expectEncRoundTrip(["nested": ["deeper": [1: [true, false]]]])
        try expectEncSameAsFoundation([[String: [Int]]](), bytes: true)
        try expectEncSameAsFoundation([String: Int](), bytes: true)
    }

    @Test func snakeCaseKeysMatchFoundation() throws {
        let names = [
            "simple", "myURLProperty", "imageURL", "URL", "URLs", "aURLb", "oneTwoThree", "_leading", "__doubleLeading",
            "trailing_", "trailing__", "_both_", "already_snake", "ABC", "aBC", "aBc", "a", "A", "", "HTTPResponseCode",
            "camelCase123Numbers", "number1Two", "äÖüStraße", "ÜberCool", "x_Y_z", "ID", "userID", "userIDs", "a1B2C3",
            "snake_Case_mixed", "__", "_", "_aB_", "iOS", "someΣigma",
        ]
        let object = EncCustom { encoder in
            var container = encoder.container(keyedBy: EncKey.self)
            for (number, name) in names.enumerated() { try container.encode(number, forKey: encKey(name)) }
            var nested = container.nestedContainer(keyedBy: EncKey.self, forKey: encKey("nestedObject"))
            try nested.encode(1, forKey: encKey("innerKey"))
        }
        let strategies = EncStrategies(snakeCase: true)
        try expectEncSameAsFoundation(object, strategies)
        // Dictionary keys are not converted, as Foundation.
        try expectEncSameAsFoundation(["myURLProperty": ["innerKey": 1]], strategies, bytes: true)
        struct Record: Codable, Equatable { var firstName: String; var lastLoginAt: Int; var tags: [String: Int] }
        let record = Record(firstName: "a", lastLoginAt: 1, tags: ["keepThis": 1])
        #expect(
            try encFolioText(record) { $0.keyEncodingStrategy = .convertToSnakeCase }
                == #"{"first_name":"a","last_login_at":1,"tags":{"keepThis":1}}"#)
        try expectEncRoundTrip(record, strategies)
    }

    @Test func oneEncoderFromManyTasks() async throws {
        struct Record: Codable, Equatable { var someValue: Int; var otherValueURL: String }
        var encoder = FolioJSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let shared = encoder
        let outputs = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for number in 0..<64 {
                group.addTask {
                    (
                        number,
                        String(
                            decoding: try shared.encode(Record(someValue: number, otherValueURL: "u\(number)")),
                            as: UTF8.self)
                    )
                }
            }
            var all: [(Int, String)] = []
            for try await output in group { all.append(output) }
            return all
        }
        #expect(outputs.count == 64)
        for (number, text) in outputs {
            #expect(text == #"{"some_value":\#(number),"other_value_url":"u\#(number)"}"#)
        }
    }

    @Test func generatedValuesRoundTrip() throws {
        var random = SplitMix64(seed: 42)
        func makePerson(_ depth: Int) -> EncPerson {
            let words = ["a", "b\"", "ç", "😀", "d\n", "long words here", ""]
            return EncPerson(
                name: words[random.below(words.count)] + "\(random.next() % 1000)",
                age: Int(truncatingIfNeeded: random.next()),
                email: random.below(2) == 0 ? nil : words[random.below(words.count)],
                tags: (0..<random.below(4)).map { _ in words[random.below(words.count)] },
                scores: Dictionary(
                    uniqueKeysWithValues: (0..<random.below(4)).map {
                        ("k\($0)", Double(bitPattern: random.next() >> 2))
                    }),
                byNumber: Dictionary(
                    uniqueKeysWithValues: (0..<random.below(3)).map { ($0 * 7 - 3, words[random.below(words.count)]) }),
                friends: depth == 0 ? [] : (0..<random.below(3)).map { _ in makePerson(depth - 1) })
        }
        for _ in 0..<200 {
            let person = makePerson(3)
            try expectEncRoundTrip(person)
            try expectEncRoundTrip(person, EncStrategies(date: .iso8601, data: .deferredToData, snakeCase: true))
        }
    }
}
