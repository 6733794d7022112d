import Foundation
import FolioJSON
import Testing

/// A thread reuses the state of its previous decode (ThreadDecoderState.swift): nothing of a
/// decode, finished or failed, may show in the next one, and a state something kept is never
/// handed out again.
@Suite struct DecoderReuseTests {
    /// Notes the identity of the decoder it is given, without keeping it.
    struct DecoderIdentity: Decodable {
        let identity: ObjectIdentifier
        let value: Int
        init(from decoder: any Decoder) throws {
            identity = ObjectIdentifier(decoder as AnyObject)
            value = try decoder.singleValueContainer().decode(Int.self)
        }
    }

    /// Keeps the decoder it was given, which a well-behaved type never does.
    final class KeepsItsDecoder: Decodable, @unchecked Sendable {
        let decoder: any Decoder
        let value: Int
        init(from decoder: any Decoder) throws {
            self.decoder = decoder
            value = try decoder.singleValueContainer().decode(Int.self)
        }
    }

    /// Where an exit test keeps a decoder between two decodes (its body captures nothing).
    enum KeptDecoder {
        nonisolated(unsafe) static var decoder: (any Decoder)?
    }

    /// Reads the kept decoder instead of its own.
    struct ReadsTheKeptDecoder: Decodable {
        init(from decoder: any Decoder) throws {
            _ = try KeptDecoder.decoder?.singleValueContainer().decode(Int.self)
        }
    }

    struct Point: Decodable, Equatable {
        var x: Int
        var y: Int
    }

    struct Outer: Decodable, Equatable {
        var inner: Point
        var name: String
    }

    /// Decodes JSON itself in its `init(from:)`, on the same thread, while the outer decode runs.
    struct DecodesInside: Decodable, Equatable {
        var point: Point
        var tag: String
        enum CodingKeys: String, CodingKey { case json, tag }
        init(point: Point, tag: String) {
            self.point = point
            self.tag = tag
        }
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let json = try c.decode(String.self, forKey: .json)
            point = try FolioJSONDecoder().decode(Point.self, from: Array(json.utf8))
            // The outer container still reads its own input after the inner decode.
            tag = try c.decode(String.self, forKey: .tag)
        }
    }

    @Test func consecutiveDecodesOnAThreadShareOneState() throws {
        let decoder = FolioJSONDecoder()
        let first = try decoder.decode(DecoderIdentity.self, from: Array("1".utf8))
        // Blocks of every size near a decoder state's, so that a state freed after the first
        // decode would be handed out again as one of these, not as the next decode's state.
        let fillers = (1...48).map { UnsafeMutableRawPointer.allocate(byteCount: 8 * $0, alignment: 8) }
        defer { for filler in fillers { filler.deallocate() } }
        let second = try decoder.decode(DecoderIdentity.self, from: Array("2".utf8))
        #expect(first.value == 1 && second.value == 2)
        #expect(first.identity == second.identity)
    }

    @Test func aKeptDecoderIsNotReused() throws {
        let kept = try FolioJSONDecoder().decode(KeepsItsDecoder.self, from: Array("1".utf8))
        let next = try FolioJSONDecoder().decode(DecoderIdentity.self, from: Array("2".utf8))
        #expect(next.value == 2)
        #expect(next.identity != ObjectIdentifier(kept.decoder as AnyObject))
    }

    @Test func aKeptDecoderUsedDuringALaterDecodeStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            KeptDecoder.decoder = try FolioJSONDecoder().decode(KeepsItsDecoder.self, from: Array("1".utf8)).decoder
            // Were the kept state reused, it would be this decode's state, valid again, and
            // the read below would quietly return this input's 2.
            _ = try FolioJSONDecoder().decode(ReadsTheKeptDecoder.self, from: Array("2".utf8))
        }
    }

    @Test func aTopLevelObjectOfOneDecodeIsNotSeenInTheNext() throws {
        let decoder = FolioJSONDecoder()
        // The first decode records a top-level object at offset 1; the second input has a
        // nested object at that offset, which must be scanned afresh.
        #expect(try decoder.decode(Point.self, from: Array(#" {"x":5,"y":6}"#.utf8)) == Point(x: 5, y: 6))
        #expect(try decoder.decode([Point].self, from: Array(#"[{"y":1,"x":2}]"#.utf8)) == [Point(x: 2, y: 1)])
    }

    @Test func duplicateKeysOfOneDecodeAreNotMarkedInTheNext() throws {
        let decoder = FolioJSONDecoder()
        #expect(try decoder.decode(Point.self, from: Array(#"{"x":1,"x":2,"y":3}"#.utf8)) == Point(x: 1, y: 3))
        #expect(try decoder.decode(Point.self, from: Array(#"{"y":4,"x":5,"z":6}"#.utf8)) == Point(x: 5, y: 4))
    }

    @Test func aFailedDecodeLeavesNothingForTheNext() throws {
        let decoder = FolioJSONDecoder()
        let failing = Array(#"{"inner":{"x":1,"y":"two"},"name":"a"}"#.utf8)
        #expect(throws: DecodingError.self) { try decoder.decode(Outer.self, from: failing) }
        let good = Array(#"{"name":"b","inner":{"y":2,"x":3}}"#.utf8)
        #expect(try decoder.decode(Outer.self, from: good) == Outer(inner: Point(x: 3, y: 2), name: "b"))
        // The next error's path is its own, not the failed decode's.
        let missing = Array(#"{"inner":{"x":1},"name":"c"}"#.utf8)
        #expect(
            outcome { try decoder.decode(Outer.self, from: missing) }.description == "keyNotFound(y) at [\"inner\"]")
        let corrupt = Array(#"{"inner":{"x":1,"y":2},"name":"c""#.utf8)
        #expect(outcome { try decoder.decode(Outer.self, from: corrupt) }.description == "dataCorrupted at []")
        #expect(try decoder.decode(Outer.self, from: good) == Outer(inner: Point(x: 3, y: 2), name: "b"))
    }

    @Test func aDecodeInsideADecodeHasItsOwnState() throws {
        let json = Array(#"{"json":"{\"x\":7,\"y\":8}","tag":"t"}"#.utf8)
        let decoder = FolioJSONDecoder()
        for _ in 0..<3 {
            #expect(
                try decoder.decode(DecodesInside.self, from: json) == DecodesInside(point: Point(x: 7, y: 8), tag: "t"))
        }
        #expect(try decoder.decode(Point.self, from: Array(#"{"x":9,"y":10}"#.utf8)) == Point(x: 9, y: 10))
    }

    @Test func strategiesAndUserInfoAreEachDecodesOwn() throws {
        struct Stamp: Decodable, Equatable {
            var at: Date
            var note: String
            init(at: Date, note: String) {
                self.at = at
                self.note = note
            }
            enum CodingKeys: String, CodingKey { case at, note }
            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                at = try c.decode(Date.self, forKey: .at)
                let suffix = decoder.userInfo[CodingUserInfoKey(rawValue: "suffix")!] as? String ?? ""
                note = try c.decode(String.self, forKey: .note) + suffix
            }
        }
        var seconds = FolioJSONDecoder()
        seconds.dateDecodingStrategy = .secondsSince1970
        seconds.userInfo[CodingUserInfoKey(rawValue: "suffix")!] = "!"
        let json = Array(#"{"at":10,"note":"n"}"#.utf8)
        #expect(try seconds.decode(Stamp.self, from: json) == Stamp(at: Date(timeIntervalSince1970: 10), note: "n!"))
        #expect(
            try FolioJSONDecoder().decode(Stamp.self, from: json)
                == Stamp(at: Date(timeIntervalSinceReferenceDate: 10), note: "n"))
    }

    @Test func aDecodeWithALargeMemberTableIsFollowedByOrdinaryOnes() throws {
        // Enough members to grow the arena past what a spare state keeps.
        let members = (0..<2_000).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        let large = try FolioJSONDecoder().decode([String: Int].self, from: Array("{\(members)}".utf8))
        #expect(large.count == 2_000 && large["k1999"] == 1999)
        #expect(try FolioJSONDecoder().decode(Point.self, from: Array(#"{"x":1,"y":2}"#.utf8)) == Point(x: 1, y: 2))
    }

    @Test func threadsDecodingAtOnceEachGetTheirOwnValues() async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for task in 0..<8 {
                group.addTask {
                    let decoder = FolioJSONDecoder()
                    for i in 0..<2_000 {
                        let x = task * 100_000 + i
                        let json = Array(#"{"inner":{"x":\#(x),"y":\#(-x)},"name":"n\#(x)"}"#.utf8)
                        let value = try decoder.decode(Outer.self, from: json)
                        guard value == Outer(inner: Point(x: x, y: -x), name: "n\(x)") else { return false }
                    }
                    return true
                }
            }
            for try await ok in group { #expect(ok) }
        }
    }
}
