import Foundation
import FolioJSON
import Testing

// Hand-written `init(from:)`s that use every container operation, decoded by both
// decoders: what they observe (keys, counts, nils, paths) must be the same.

/// Records what a keyed container shows: sorted keys (Foundation's order is a hash
/// order), `contains`, nil checks, nested containers and super decoders.
struct KeyedProbe: Decodable, Equatable {
    var keys: [String]
    var containsA: Bool
    var containsMissing: Bool
    var aIsNil: Bool?
    var nested: [String]
    var nestedArray: [Int]
    var superValue: Int?
    var superForKey: String?
    var superMissingIsNil: Bool
    var codingPath: [String]
    var nestedPath: [String]

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ s: String) { stringValue = s }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        keys = c.allKeys.map(\.stringValue).sorted()
        containsA = c.contains(AnyKey("a"))
        containsMissing = c.contains(AnyKey("missing"))
        aIsNil = try? c.decodeNil(forKey: AnyKey("a"))
        if let n = try? c.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("obj")) {
            nested = n.allKeys.map(\.stringValue).sorted()
            nestedPath = n.codingPath.map(\.stringValue)
        } else {
            nested = []
            nestedPath = []
        }
        if var u = try? c.nestedUnkeyedContainer(forKey: AnyKey("arr")) {
            var values: [Int] = []
            while !u.isAtEnd { values.append((try? u.decode(Int.self)) ?? -1); if values.count > 10 { break } }
            nestedArray = values
        } else {
            nestedArray = []
        }
        superValue = try? c.superDecoder().singleValueContainer().decode(Int.self)
        superForKey = try? c.superDecoder(forKey: AnyKey("s")).singleValueContainer().decode(String.self)
        superMissingIsNil = (try? c.superDecoder(forKey: AnyKey("missing")).singleValueContainer().decodeNil()) ?? false
        codingPath = c.codingPath.map(\.stringValue)
    }
}

/// Records what an unkeyed container shows.
struct UnkeyedProbe: Decodable, Equatable {
    var count: Int?
    var log: [String]

    init(from decoder: any Decoder) throws {
        var u = try decoder.unkeyedContainer()
        count = u.count
        var log: [String] = []
        if try u.decodeNil() { log.append("nil@0") }
        while !u.isAtEnd && log.count < 40 {
            let index = u.currentIndex
            if let i = try? u.decode(Int.self) { log.append("int \(i)"); continue }
            if let s = try? u.decode(String.self) { log.append("string \(s)"); continue }
            if var inner = try? u.nestedUnkeyedContainer() {
                log.append("array of \(inner.count ?? -1) at \(inner.codingPath.map(\.stringValue))")
                _ = try? inner.decode(Int.self)
                continue
            }
            if let keyed = try? u.nestedContainer(keyedBy: KeyedProbe.AnyKey.self) {
                log.append(
                    "object \(keyed.allKeys.map(\.stringValue).sorted()) at \(keyed.codingPath.map(\.stringValue))")
                continue
            }
            if try u.decodeNil() { log.append("nil"); continue }
            if u.currentIndex == index { log.append("stuck at \(index)"); _ = try? u.superDecoder(); continue }
        }
        log.append("end at \(u.currentIndex)")
        do { _ = try u.decode(Int.self) } catch { log.append("after end: \(describe(error))") }
        do { _ = try u.decodeNil() } catch { log.append("nil after end: \(describe(error))") }
        let optional = try u.decodeIfPresent(Int.self)
        log.append("ifPresent after end: \(String(describing: optional)) index \(u.currentIndex)")
        do { _ = try u.nestedUnkeyedContainer() } catch { log.append("nested after end: \(describe(error))") }
        do { _ = try u.superDecoder() } catch { log.append("super after end: \(describe(error))") }
        self.log = log
    }
}

func describe(_ error: any Error) -> String {
    switch outcome({ () throws -> Int in throw error }) {
    case .failure(let kind, let path): return "\(kind) \(path)"
    case .value: return "?"
    }
}

/// A class hierarchy coded through `superDecoder()`, as Swift classes do.
class Base: Codable, Equatable {
    var id: Int
    init(id: Int) { self.id = id }
    static func == (a: Base, b: Base) -> Bool { a.id == b.id && type(of: a) == type(of: b) && a.isEqual(b) }
    func isEqual(_ other: Base) -> Bool { true }
}

final class Derived: Base, @unchecked Sendable {
    var name: String
    init(id: Int, name: String) { self.name = name; super.init(id: id) }
    enum CodingKeys: String, CodingKey { case name }
    required init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        try super.init(from: c.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try super.encode(to: c.superEncoder())
    }
    override func isEqual(_ other: Base) -> Bool { (other as? Derived)?.name == name }
}

/// Reads a value from `userInfo`.
struct UserInfoProbe: Decodable, Equatable {
    static let key = CodingUserInfoKey(rawValue: "probe")!
    var seen: String?
    init(from decoder: any Decoder) throws {
        seen = decoder.userInfo[UserInfoProbe.key] as? String
        _ = try decoder.singleValueContainer()
    }
}

/// A generic wrapper whose single value container sees its own path.
struct PathProbe: Decodable, Equatable {
    var path: [String]
    init(from decoder: any Decoder) throws {
        path = decoder.codingPath.map { $0.stringValue }
        let c = try decoder.singleValueContainer()
        #expect(c.codingPath.map(\.stringValue) == path)
    }
}

@Suite struct DecoderContainerTests {
    @Test func keyedContainerOperations() {
        let texts = [
            "{\"a\":null,\"obj\":{\"x\":1,\"y\":2},\"arr\":[1,2,\"x\",4],\"super\":5,\"s\":\"str\",\"z\":true}",
            "{\"a\":1}",
            "{}",
            "{\"a\":1,\"a\":null,\"obj\":[],\"arr\":{},\"super\":\"x\",\"s\":3}",
            "{\"\\u0061\":null,\"o\\u0062j\":{\"\\u00e9\":1}}",
            "{\"obj\":{\"obj\":{}},\"arr\":[[1],[2]]}",
        ]
        for text in texts {
            expectSame(KeyedProbe.self, text)
            expectSame([KeyedProbe].self, "[\(text), \(text)]")
            expectSame([String: KeyedProbe].self, "{\"k\": \(text)}")
        }
        expectSame(KeyedProbe.self, "[]")
        expectSame(KeyedProbe.self, "null")
    }

    @Test func unkeyedContainerOperations() {
        let texts = [
            "[]", "[null]", "[1,2,3]", "[null,1,\"a\",[1,2],{\"k\":1},null,true,1.5]", "[[],[[]],{}]", "[1,]",
            "[true,false]",
        ]
        for text in texts {
            expectSame(UnkeyedProbe.self, text)
            expectSame([UnkeyedProbe].self, "[\(text)]")
            expectSame(DBox<UnkeyedProbe>.self, "{\"value\":\(text)}")
        }
        expectSame(UnkeyedProbe.self, "{}")
        expectSame(UnkeyedProbe.self, "null")
    }

    @Test func superDecoderForClasses() throws {
        try expectRoundTrip(Derived(id: 3, name: "three") as Derived)
        expectSame(Derived.self, "{\"name\":\"x\"}")
        expectSame(Derived.self, "{\"name\":\"x\",\"super\":{\"id\":\"1\"}}")
        expectSame([Derived].self, "[{\"name\":\"x\",\"super\":{\"id\":1}},{\"name\":\"y\",\"super\":{}}]")
    }

    @Test func userInfoAndPaths() throws {
        var folio = FolioJSONDecoder()
        folio.userInfo[UserInfoProbe.key] = "hello"
        #expect(try folio.decode(UserInfoProbe.self, from: Array("1".utf8)).seen == "hello")
        #expect(try FolioJSONDecoder().decode(UserInfoProbe.self, from: Array("1".utf8)).seen == nil)
        expectSame([String: [PathProbe]].self, "{\"a\":[1,2],\"b\":[]}")
        expectSame(DBox<[PathProbe?]>.self, "{\"value\":[null,1]}")
    }
}

/// A keyed wrapper for decode-only values.
struct DBox<T: Decodable & Equatable>: Decodable, Equatable {
    var value: T
}
