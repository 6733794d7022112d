import Foundation
import Testing
import FolioJSON

/// The coders' other entry points agree with the ones the round trips use.
@Suite("Differential entry points") struct DifferentialEntryPointTests {
    /// `encode(_:appendingTo:)` appends exactly what `encode(_:)` returns, and leaves the
    /// buffer as it was when it throws; every `decode` overload reads the same value.
    @Test(.enabled(if: DiffCoder.folio.side == .folio, "Folio's own API")) func entryPointsAgree() throws {
        var generator = DiffGenerator(seed: DiffBudget.seed &+ 31, options: ValueOptions(nonFinite: true))
        var threw = 0
        for i in 0..<DiffBudget.count(2_000) {
            let shape = generator.shape(depth: 3)
            let value = generator.value(shape)
            let generated = DiffGenerated(shape: shape, value: value)
            let header: [UInt8] = Array("header\u{0}{[\"".utf8)
            var buffer = header
            guard let bytes = try? FolioJSONEncoder().encode(generated) else {
                // Non-finite floats with the default strategy: throws, buffer untouched.
                threw += 1
                #expect(throws: EncodingError.self) { try FolioJSONEncoder().encode(generated, appendingTo: &buffer) }
                #expect(buffer == header, "seed \(DiffBudget.seed &+ 31) #\(i): buffer changed by a throwing encode")
                #expect(throws: EncodingError.self) { try JSONEncoder().encode(generated) }
                continue
            }
            try FolioJSONEncoder().encode(generated, appendingTo: &buffer)
            #expect(buffer == header + bytes, "#\(i) shape \(shape)")

            var decoder = FolioJSONDecoder()
            decoder.userInfo = [.diffShapes: ShapeStack(shape)]
            let fromArray = try decoder.decode(DiffGenerated.self, from: bytes).value
            let fromSlice = try decoder.decode(DiffGenerated.self, from: buffer[header.count...]).value
            let fromData = try decoder.decode(DiffGenerated.self, from: Data(bytes)).value
            let fromPointer = try bytes.withUnsafeBytes { try decoder.decode(DiffGenerated.self, from: $0) }.value
            for decoded in [fromArray, fromSlice, fromData, fromPointer] {
                #expect(strictlyEqual(decoded, value), "#\(i) shape \(shape) json \(jsonText(bytes))")
            }
        }
        #expect(threw > 0)
    }

    /// The generated enum encoding is what a synthesized `Codable` enum writes and reads.
    @Test func generatedEnumsMatchSynthesizedCodable() throws {
        enum Synthesized: Codable, Equatable {
            case plain
            case unlabeled(Int8, String)
            case labeled(first: Bool, second: Double?)
            case mixed(Int, named: [UInt8])
        }
        let shape = DiffShape.array(
            .enumeration([
                ShapeCase(name: "plain", fields: []),
                ShapeCase(name: "unlabeled", fields: [(nil, .int8), (nil, .string)]),
                ShapeCase(name: "labeled", fields: [("first", .bool), ("second", .optional(.double))]),
                ShapeCase(name: "mixed", fields: [(nil, .int), ("named", .array(.uint8, .direct))]),
            ]), .direct)
        let values: [Synthesized] = [
            .plain, .unlabeled(-1, "x\"y"), .labeled(first: true, second: nil), .labeled(first: false, second: 0.5),
            .mixed(7, named: [0, 255]),
        ]
        let generated = DiffValue.array([
            .enumeration(0, []), .enumeration(1, [.int8(-1), .string("x\"y")]), .enumeration(2, [.bool(true), .none]),
            .enumeration(2, [.bool(false), .some(.double(0.5))]),
            .enumeration(3, [.int(7), .array([.uint8(0), .uint8(255)])]),
        ])
        let synthesizedJSON = try JSONEncoder().encode(values)
        let generatedJSON = try DiffCoder.foundation.encode(generated, as: shape)
        #expect(
            try JSONDecoder().decode(DiffAnyJSON.self, from: synthesizedJSON)
                == DiffCoder.foundation.decode(DiffAnyJSON.self, from: generatedJSON))
        #expect(try JSONDecoder().decode([Synthesized].self, from: Data(generatedJSON)) == values)
        #expect(strictlyEqual(try DiffCoder.foundation.decode(shape, from: Array(synthesizedJSON)), generated))
        // And through Folio.
        #expect(try DiffCoder.folio.decode([Synthesized].self, from: Array(synthesizedJSON)) == values)
        #expect(try JSONDecoder().decode([Synthesized].self, from: Data(DiffCoder.folio.encode(values))) == values)
    }

    /// Super encoders of an unkeyed container filled and released in another order than
    /// asked for. Folio puts each value where `superEncoder()` was called; Foundation puts it
    /// where the array is when the super encoder is released (its referencing encoder
    /// inserts on deinit), so the two differ: a known difference, recorded, not a failure.
    @Test(.enabled(if: DiffCoder.folio.side == .folio, "a difference of Folio from Foundation"))
    func lateSuperEncodersInArrays() throws {
        struct LateSupers: Encodable {
            func encode(to encoder: any Encoder) throws {
                var c = encoder.unkeyedContainer()
                var supers = [c.superEncoder(), c.superEncoder(), c.superEncoder()]
                for (i, s) in supers.enumerated().reversed() {
                    var v = s.singleValueContainer()
                    try v.encode(i)
                }
                supers.removeAll()
            }
        }
        let folio = try DiffCoder.folio.decode([Int].self, from: DiffCoder.folio.encode(LateSupers()))
        let foundation = try JSONDecoder().decode([Int].self, from: JSONEncoder().encode(LateSupers()))
        #expect(folio == [0, 1, 2] || DiffCoder.folio.side != .folio)
        withKnownIssue("Foundation writes [2, 1, 0]: values in release order") {
            #expect(folio == foundation)
        }
    }

    /// A key encoded twice into one object: Foundation's encoder keeps the last value; Folio
    /// writes both members (documented), and both decoders read the first, so the value read
    /// back differs from Foundation's round trip. A known difference, recorded.
    @Test(.enabled(if: DiffCoder.folio.side == .folio, "a difference of Folio from Foundation")) func keyEncodedTwice()
        throws
    {
        struct Twice: Encodable {
            enum Keys: String, CodingKey { case a }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: Keys.self)
                try c.encode(1, forKey: .a)
                try c.encode(2, forKey: .a)
            }
        }
        class Base: Encodable {
            var name = "base"
            enum Keys: String, CodingKey { case name }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: Keys.self)
                try c.encode(name, forKey: .name)
            }
        }
        final class Derived: Base {
            var derivedName = "derived"
            override func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: Keys.self)
                try c.encode(derivedName, forKey: .name)
                try super.encode(to: encoder)
            }
        }
        struct A: Decodable { var a: Int }
        struct Named: Decodable { var name: String }
        let foundationTwice = try JSONDecoder().decode(A.self, from: JSONEncoder().encode(Twice())).a
        let folioTwice = try JSONDecoder().decode(A.self, from: Data(DiffCoder.folio.encode(Twice()))).a
        let foundationDerived = try JSONDecoder().decode(Named.self, from: JSONEncoder().encode(Derived())).name
        let folioDerived = try JSONDecoder().decode(Named.self, from: Data(DiffCoder.folio.encode(Derived()))).name
        #expect(foundationTwice == 2 && foundationDerived == "base")
        withKnownIssue(
            "Folio writes the key twice; decoders read the first: 1 and \"derived\", where Foundation gives 2 and \"base\""
        ) {
            #expect(folioTwice == foundationTwice)
            #expect(folioDerived == foundationDerived)
        }
    }
}
