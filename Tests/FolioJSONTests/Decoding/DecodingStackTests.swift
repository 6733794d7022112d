import Testing
import Foundation
import FolioJSON

/// The lowest stack address the coded types reached in one encode or decode (the stack
/// grows down): handed to them through `userInfo`, used by one thread at a time.
final class StackGauge: @unchecked Sendable {
    static let key = CodingUserInfoKey(rawValue: "folio.test.stackGauge")!
    private(set) var lowest = UInt.max

    @inline(never)
    func mark() {
        var local = 0
        let address = withUnsafeMutablePointer(to: &local) { UInt(bitPattern: $0) }
        if address < lowest { lowest = address }
    }

    static func mark(_ userInfo: [CodingUserInfoKey: Any]) { (userInfo[key] as? StackGauge)?.mark() }
}

/// Recursive types of each kind of nesting, each marking the gauge at every level.
enum Nest {
    /// `{"next":{"next":{}}}`: one object a level, hand-written conformance.
    final class Keyed: Codable {
        let next: Keyed?
        init(levels: Int) { next = levels > 1 ? Keyed(levels: levels - 1) : nil }
        enum CodingKeys: String, CodingKey { case next }
        init(from decoder: any Decoder) throws {
            StackGauge.mark(decoder.userInfo)
            next = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Keyed.self, forKey: .next)
        }
        func encode(to encoder: any Encoder) throws {
            StackGauge.mark(encoder.userInfo)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(next, forKey: .next)
        }
    }

    /// A record with many properties and a child, synthesized: the costliest frames per
    /// level of the shapes here. Its deepest object holds an array and a dictionary.
    final class Record: Codable {
        var mark = Mark()
        var name = "record", count = 1, ratio = 2.5, flag = true, note: String? = "note", extra: Int? = 6
        var title = "title", number = 10, weight = 11.5, done = false, missing: String? = nil, absent: Int? = nil
        var when = Date(timeIntervalSince1970: 0), list = [1, 2], table = ["key": "value"]
        var child: Record?
        init(levels: Int) { child = levels > 2 ? Record(levels: levels - 1) : nil }
    }

    /// A value that marks the gauge where it is coded.
    struct Mark: Codable {
        init() {}
        init(from decoder: any Decoder) throws {
            StackGauge.mark(decoder.userInfo)
            _ = try decoder.singleValueContainer().decode(Int.self)
        }
        func encode(to encoder: any Encoder) throws {
            StackGauge.mark(encoder.userInfo)
            var container = encoder.singleValueContainer()
            try container.encode(0)
        }
    }

    /// `[[[]]]`: one array a level, through `Array`'s own conformance.
    struct Arrays: Codable {
        var children: [Arrays]
        init(levels: Int) { children = levels > 1 ? [Arrays(levels: levels - 1)] : [] }
        init(from decoder: any Decoder) throws {
            StackGauge.mark(decoder.userInfo)
            children = try [Arrays](from: decoder)
        }
        func encode(to encoder: any Encoder) throws {
            StackGauge.mark(encoder.userInfo)
            try children.encode(to: encoder)
        }
    }

    /// `{"k":{"k":{}}}`: one object a level, through `Dictionary`'s own conformance.
    struct Dictionaries: Codable {
        var children: [String: Dictionaries]
        init(levels: Int) { children = levels > 1 ? ["k": Dictionaries(levels: levels - 1)] : [:] }
        init(from decoder: any Decoder) throws {
            StackGauge.mark(decoder.userInfo)
            children = try [String: Dictionaries](from: decoder)
        }
        func encode(to encoder: any Encoder) throws {
            StackGauge.mark(encoder.userInfo)
            try children.encode(to: encoder)
        }
    }

    /// `{"node":{"_0":...{"leaf":{"_0":0}}}}`: an enum with associated values, synthesized,
    /// two objects a level.
    indirect enum Choice: Codable {
        case leaf(Mark)
        case node(Choice)
        init(levels: Int) { self = levels > 2 ? .node(Choice(levels: levels - 2)) : .leaf(Mark()) }
    }

    /// `[[[1,2]]]`: arrays around a `Data` written as an array of its bytes, the innermost
    /// encoded straight into the last array.
    struct DataInArrays: Encodable {
        let levels: Int
        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            if levels > 2 {
                try container.encode(DataInArrays(levels: levels - 1))
            } else {
                try container.encode(Data([1, 2]))
            }
        }
    }

    /// A shape's name, a value nested exactly `depth` deep (in arrays and objects), and a
    /// decode of its JSON.
    struct Shape: Sendable {
        let name: String
        let value: @Sendable (_ depth: Int) -> any Encodable
        let decode: @Sendable (FolioJSONDecoder, [UInt8]) throws -> Void
    }

    static let shapes: [Shape] = [
        Shape(name: "keyed", value: { Keyed(levels: $0) }, decode: { _ = try $0.decode(Keyed.self, from: $1) }),
        Shape(name: "record", value: { Record(levels: $0) }, decode: { _ = try $0.decode(Record.self, from: $1) }),
        Shape(name: "arrays", value: { Arrays(levels: $0) }, decode: { _ = try $0.decode(Arrays.self, from: $1) }),
        Shape(
            name: "dictionaries", value: { Dictionaries(levels: $0) },
            decode: { _ = try $0.decode(Dictionaries.self, from: $1) }),
        // An even depth: the enum nests two levels at a time.
        Shape(
            name: "enum", value: { Choice(levels: $0 / 2 * 2) }, decode: { _ = try $0.decode(Choice.self, from: $1) }),
    ]

    /// How deep `json` nests arrays and objects (none of these documents has a bracket in
    /// a string).
    static func depth(of json: [UInt8]) -> Int {
        var depth = 0, deepest = 0
        for byte in json {
            if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") { depth += 1; deepest = max(deepest, depth) }
            if byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") { depth -= 1 }
        }
        return deepest
    }
}

/// Decoding (and encoding) recurses once per level of nesting, so `maximumDepth` is what
/// bounds the stack they use: at the default limit, every shape here must fit a 512 KiB
/// stack (Apple's secondary threads and concurrency pool threads) with room to spare for
/// the caller. Docs/JSON.md, "Nesting and the stack".
@Suite struct DecodingStackTests {
    /// What the deepest decode or encode at the default limit may use: 3/4 of 512 KiB,
    /// leaving 128 KiB for the caller (Folio's own read path uses about 16 KiB).
    static let budget = 384 * 1024
    static let smallStack = 512 * 1024

    /// Runs `body` on a thread of its own with `stackSize` bytes of stack.
    static func onThread<T: Sendable>(stackSize: Int, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.stackSize = stackSize
            thread.start()
        }
    }

    /// The stack the decode of `json` used, from the start of `body` to the deepest mark.
    static func stackUsed(_ body: (StackGauge) throws -> Void) rethrows -> Int {
        let gauge = StackGauge()
        var top = 0
        let start = withUnsafeMutablePointer(to: &top) { UInt(bitPattern: $0) }
        try body(gauge)
        return gauge.lowest == .max ? 0 : Int(start - gauge.lowest)
    }

    /// At the default limit, decoding and encoding each shape stay within the budget
    /// (measured on a large stack, so a limit raised too far fails here rather than
    /// crashing), then run on a 512 KiB stack; one level deeper is refused by both.
    @Test func theDefaultLimitFitsA512KiBStack() async throws {
        let limit = FolioJSONDecoder.defaultMaximumDepth
        #expect(FolioJSONDecoder().maximumDepth == limit && FolioJSONEncoder().maximumDepth == limit)
        let measured = await Self.onThread(stackSize: 8 << 20) { () -> [String] in
            var report: [String] = []
            for shape in Nest.shapes {
                do {
                    var encoder = FolioJSONEncoder()
                    let json = try encoder.encode(shape.value(limit))
                    guard Nest.depth(of: json) == limit / 2 * 2 || Nest.depth(of: json) == limit else {
                        report.append("\(shape.name): nested \(Nest.depth(of: json)), not \(limit)")
                        continue
                    }
                    let decoding = try Self.stackUsed { gauge in
                        var decoder = FolioJSONDecoder()
                        decoder.userInfo[StackGauge.key] = gauge
                        try shape.decode(decoder, json)
                    }
                    let encoding = try Self.stackUsed { gauge in
                        encoder.userInfo[StackGauge.key] = gauge
                        _ = try encoder.encode(shape.value(limit))
                    }
                    if decoding > Self.budget || encoding > Self.budget {
                        report.append(
                            "\(shape.name) at \(limit) levels: decoding used \(decoding) bytes of stack, encoding \(encoding); the budget is \(Self.budget)"
                        )
                    }
                } catch {
                    report.append("\(shape.name): \(error)")
                }
            }
            return report
        }
        #expect(measured.isEmpty, "\(measured)")
        // Only within the budget can the 512 KiB run not overflow (and stop the test run).
        guard measured.isEmpty else { return }
        let failures = await Self.onThread(stackSize: Self.smallStack) { () -> [String] in
            var failures: [String] = []
            for shape in Nest.shapes {
                do {
                    let json = try FolioJSONEncoder().encode(shape.value(limit))
                    try shape.decode(FolioJSONDecoder(), json)
                } catch {
                    failures.append("\(shape.name) at \(limit) levels on a 512 KiB stack: \(error)")
                }
            }
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    /// One level past the limit: the decoder refuses the document and the encoder the
    /// value, before going deeper.
    @Test func oneLevelPastTheLimitIsRefused() throws {
        let limit = FolioJSONDecoder.defaultMaximumDepth
        for shape in Nest.shapes where shape.name != "enum" {
            var wide = FolioJSONEncoder()
            wide.maximumDepth = limit + 1
            let json = try wide.encode(shape.value(limit + 1))
            #expect(Nest.depth(of: json) == limit + 1)
            #expect(throws: DecodingError.self, "\(shape.name)") { try shape.decode(FolioJSONDecoder(), json) }
            #expect(throws: EncodingError.self, "\(shape.name)") {
                try FolioJSONEncoder().encode(shape.value(limit + 1))
            }
            var deeper = FolioJSONDecoder()
            deeper.maximumDepth = limit + 1
            #expect(throws: Never.self, "\(shape.name)") { try shape.decode(deeper, json) }
        }
        // `Data` as an array of bytes is written without a frame of the encoder's own: it
        // still counts as a level.
        var bytes = FolioJSONEncoder()
        bytes.dataEncodingStrategy = .deferredToData
        #expect(Nest.depth(of: try bytes.encode(Nest.DataInArrays(levels: limit))) == limit)
        #expect(throws: EncodingError.self) { try bytes.encode(Nest.DataInArrays(levels: limit + 1)) }
    }
}
