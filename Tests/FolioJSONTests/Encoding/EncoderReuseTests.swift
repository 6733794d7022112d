import Foundation
import FolioJSON
import Testing

/// A thread reuses the state of its previous top-level encode (ThreadEncoderState.swift):
/// nothing of an encode, finished or failed, may show in the next one, an encode inside
/// another gets a state of its own, and a state something kept is never handed out again.
@Suite struct EncoderReuseTests {
    /// Notes the identity of the encoder state it is given, without keeping it.
    struct EncoderIdentity: Encodable {
        let value: Int
        static nonisolated(unsafe) var seen: [ObjectIdentifier] = []
        func encode(to encoder: any Encoder) throws {
            // The state is the first stored property of the stream encoder (a class reference).
            Self.seen.append(ObjectIdentifier(Mirror(reflecting: encoder).children.first!.value as AnyObject))
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }

    /// Where a test keeps an encoder past its encode (a well-behaved type never does).
    enum KeptEncoder {
        nonisolated(unsafe) static var encoder: (any Encoder)?
    }

    /// Keeps the encoder it was given, then writes its value.
    struct KeepsItsEncoder: Encodable {
        let value: Int
        func encode(to encoder: any Encoder) throws {
            KeptEncoder.encoder = encoder
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(value, forKey: .value)
        }
        enum Key: String, CodingKey { case value }
    }

    /// Writes through the kept encoder, then its own value.
    struct WritesThroughTheKeptEncoder: Encodable {
        let value: Int
        func encode(to encoder: any Encoder) throws {
            var late = KeptEncoder.encoder!.container(keyedBy: KeepsItsEncoder.Key.self)
            try late.encode(99, forKey: .value)
            var container = encoder.container(keyedBy: KeepsItsEncoder.Key.self)
            try container.encode(value, forKey: .value)
        }
    }

    struct Point: Encodable {
        var x: Int
        var y: Int
    }

    /// Encodes JSON itself in its `encode(to:)`, on the same thread, while the outer encode runs.
    struct EncodesInside: Encodable {
        var point: Point
        var tag: String
        enum CodingKeys: String, CodingKey { case json, tag }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            let json = try FolioJSONEncoder().encode(point)
            try container.encode(String(decoding: json, as: UTF8.self), forKey: .json)
            // The outer container still writes its own output after the inner encode.
            try container.encode(tag, forKey: .tag)
        }
    }

    /// Throws after writing part of its object.
    struct FailsHalfway: Encodable {
        struct Refused: Error {}
        enum CodingKeys: String, CodingKey { case written, refused }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode("part", forKey: .written)
            throw Refused()
        }
    }

    struct SnakeCased: Encodable {
        var firstName: String
    }

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func consecutiveEncodesOnAThreadShareOneState() throws {
        EncoderIdentity.seen = []
        let encoder = FolioJSONEncoder()
        #expect(text(try encoder.encode(EncoderIdentity(value: 1))) == "1")
        // Blocks of every size near an encoder state's, so that a state freed after the first
        // encode would be handed out again as one of these, not as the next encode's state.
        let fillers = (1...48).map { UnsafeMutableRawPointer.allocate(byteCount: 8 * $0, alignment: 8) }
        defer { for filler in fillers { filler.deallocate() } }
        #expect(text(try encoder.encode(EncoderIdentity(value: 2))) == "2")
        #expect(EncoderIdentity.seen.count == 2 && EncoderIdentity.seen[0] == EncoderIdentity.seen[1])
    }

    @Test func aReusedStateStartsEmpty() throws {
        let encoder = FolioJSONEncoder()
        let long = String(repeating: "x", count: 5000)
        #expect(text(try encoder.encode([long, long])) == "[\"\(long)\",\"\(long)\"]")
        #expect(text(try encoder.encode(Point(x: 1, y: 2))) == #"{"x":1,"y":2}"#)
        var appended: [UInt8] = Array("head:".utf8)
        try encoder.encode(Point(x: 3, y: 4), appendingTo: &appended)
        #expect(text(appended) == #"head:{"x":3,"y":4}"#)
    }

    @Test func eachEncodeUsesItsOwnOptions() throws {
        var snake = FolioJSONEncoder()
        snake.keyEncodingStrategy = .convertToSnakeCase
        let plain = FolioJSONEncoder()
        #expect(text(try snake.encode(SnakeCased(firstName: "Ann"))) == #"{"first_name":"Ann"}"#)
        #expect(text(try plain.encode(SnakeCased(firstName: "Ann"))) == #"{"firstName":"Ann"}"#)
        #expect(text(try snake.encode(SnakeCased(firstName: "Bo"))) == #"{"first_name":"Bo"}"#)
    }

    @Test func anEncodeAfterAFailedOneIsWhole() throws {
        let encoder = FolioJSONEncoder()
        #expect(throws: FailsHalfway.Refused.self) { try encoder.encode(FailsHalfway()) }
        #expect(text(try encoder.encode(Point(x: 5, y: 6))) == #"{"x":5,"y":6}"#)
    }

    @Test func anEncodeInsideAnotherHasItsOwnState() throws {
        let bytes = try FolioJSONEncoder().encode(EncodesInside(point: Point(x: 1, y: 2), tag: "t"))
        #expect(text(bytes) == #"{"json":"{\"x\":1,\"y\":2}","tag":"t"}"#)
        #expect(text(try FolioJSONEncoder().encode(Point(x: 7, y: 8))) == #"{"x":7,"y":8}"#)
    }

    @Test func aKeptEncoderCannotWriteIntoALaterEncode() throws {
        let encoder = FolioJSONEncoder()
        #expect(text(try encoder.encode(KeepsItsEncoder(value: 1))) == #"{"value":1}"#)
        // The kept encoder writes while the next encode runs: had its state been handed
        // out again, the write would land in that encode's output.
        #expect(text(try encoder.encode(WritesThroughTheKeptEncoder(value: 2))) == #"{"value":2}"#)
        KeptEncoder.encoder = nil
        #expect(text(try encoder.encode(Point(x: 3, y: 4))) == #"{"x":3,"y":4}"#)
    }
}
