import Testing
@testable import Folio

/// What the verifier accepts as a stored value of the key-value store (Docs/Format.md §25):
/// layout byte 1, then one valid JSON text of any kind; anything else is a problem.
@Suite struct ValueJSONCheckTests {
    static let valid = [
        "5", "-0.5e3", "12345678901234567890123", "1e400", #""text""#, "null", "true", "false", "[]", "{}", "[[[]]]",
        #" {"a": [1, {"b": null}], "c": "\u00e9\n"} "#, #"{"a":1,"a":2}"#, "\t[0, -0, 1E+2, 0.5e-1]\r\n", #""süß ☕""#,
        // As deep as the key-value store's decoder reads (FolioJSONDecoder's default limit).
        String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
    ]
    static let invalid = [
        "", " ", "[1,]", "5 5", #"{"a": "#, "nul", "tru", #""unterminated"#, #"{"a" 1}"#, "[1 2]", "{'a':1}",
        #""\x""#, "01", "1.", "+1", "[", "}", #"{"a":1,}"#, "NaN", #""\u12""#, "\"tab\there\"", "-", "1e", ".5",
        String(repeating: "[", count: 101) + String(repeating: "]", count: 101),
    ]

    @Test(arguments: valid)
    func validJSONIsNoProblem(_ text: String) {
        #expect(KeyValueVerifier.problem(with: [1] + Array(text.utf8)) == nil)
    }

    @Test(arguments: invalid)
    func invalidJSONIsAProblem(_ text: String) {
        let problem = KeyValueVerifier.problem(with: [1] + Array(text.utf8))
        #expect(problem?.hasPrefix("the value is not valid JSON: ") == true, "\(text): \(problem ?? "accepted")")
    }

    /// Nesting is counted in arrays and objects open at once, as the decoder counts it: as
    /// many as the decoder's default limit (100) pass, with or without a value inside, and
    /// one more is refused, by the check and by the decoder alike.
    @Test(arguments: [true, false])
    func nestingAtTheLimitPassesAndOneMoreIsAProblem(arrays: Bool) throws {
        let limit = FolioJSONDecoder.defaultMaximumDepth
        func nested(_ depth: Int) -> String {
            arrays
                ? String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
                : String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)
        }
        #expect(KeyValueVerifier.problem(with: [1] + Array(nested(limit).utf8)) == nil)
        #expect(
            KeyValueVerifier.problem(
                with: [1] + Array((String(repeating: "[", count: limit) + String(repeating: "]", count: limit)).utf8))
                == nil)
        let problem = KeyValueVerifier.problem(with: [1] + Array(nested(limit + 1).utf8))
        #expect(
            problem
                == "the value is not valid JSON: nesting deeper than \(limit) levels at byte \(arrays ? limit : limit * 5)",
            "\(problem ?? "accepted")")
        #expect(throws: Never.self) { _ = try FolioJSONDecoder().decode(Nested.self, from: Array(nested(limit).utf8)) }
        #expect(throws: DecodingError.self) {
            _ = try FolioJSONDecoder().decode(Nested.self, from: Array(nested(limit + 1).utf8))
        }
    }

    /// Any nesting of arrays and single-member objects around an integer.
    indirect enum Nested: Decodable {
        case leaf(Int)
        case list([Nested])
        case object([String: Nested])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(Int.self) {
                self = .leaf(value)
            } else if let list = try? container.decode([Nested].self) {
                self = .list(list)
            } else {
                self = .object(try container.decode([String: Nested].self))
            }
        }
    }

    /// The decoders (Foundation's and Folio's) read a trailing comma; the check does not: a
    /// value it passes is JSON to every reader. Problems say where.
    @Test func problemsSayWhere() {
        #expect(
            KeyValueVerifier.problem(with: [1] + Array("[1,]".utf8))
                == "the value is not valid JSON: expected a value at byte 3")
        #expect(
            KeyValueVerifier.problem(with: [1] + Array("5 5".utf8))
                == "the value is not valid JSON: text after the value at byte 2")
        #expect(
            KeyValueVerifier.problem(with: [1] + Array(#"{"a": "#.utf8))
                == "the value is not valid JSON: unexpected end at byte 6")
        #expect(
            KeyValueVerifier.problem(with: [1, 0x22, 0xFF, 0x22])
                == "the value is not valid JSON: not valid UTF-8 at byte 0")
    }

    @Test func otherLayoutsAndEmptyValuesAreProblems() {
        #expect(KeyValueVerifier.problem(with: [0] + Array("5".utf8)) == "unknown value layout 0 (expected 1)")
        #expect(KeyValueVerifier.problem(with: [2]) == "unknown value layout 2 (expected 1)")
        #expect(KeyValueVerifier.problem(with: [])?.hasPrefix("the stored value is empty") == true)
    }
}
