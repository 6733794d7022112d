import Foundation
import FolioStorage
import Testing

/// The key of a single component.
func key<T: KeyComponent>(_ value: T) -> [UInt8] {
    var encoder = KeyEncoder()
    encoder.append(value)
    return encoder.bytes
}

/// Decodes one component that must use every byte of `bytes`.
func decodeWhole<T: KeyComponent>(_ type: T.Type, _ bytes: [UInt8]) throws(StorageError) -> T {
    var decoder = KeyDecoder(bytes)
    let value = try decoder.decode(T.self)
    guard decoder.isAtEnd else {
        throw .invalidKey(reason: "test: \(bytes.count - decoder.offset) bytes left over")
    }
    return value
}

/// -1, 0 or 1 as Swift's `<` and `==` order two values.
func swiftOrder<T: Comparable>(_ a: T, _ b: T) -> Int {
    a < b ? -1 : (a == b ? 0 : 1)
}

/// A description of `value` for failure messages that never traps. (Foundation's description of
/// a `Date` whose interval is NaN traps, and NaN dates are among the tested values.)
func describe<T>(_ value: T) -> String {
    if let date = value as? Date {
        return "Date(timeIntervalSinceReferenceDate: \(date.timeIntervalSinceReferenceDate))"
    }
    if let date = value as? Date? {
        return date.map { "Optional(\(describe($0)))" } ?? "nil"
    }
    return String(reflecting: value)
}

/// Hex dump of key bytes, for failure messages.
func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
}

/// Collects the outcome of many property checks and reports them as one expectation, so that a
/// property test runs tens of thousands of cases quickly and a failure names the first few
/// counterexamples.
struct KeyPropertyLog {
    private(set) var cases = 0
    private(set) var failureCount = 0
    private var examples: [String] = []

    /// Records one case; `message` is built only for failures.
    mutating func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        cases += 1
        if !condition {
            failureCount += 1
            if examples.count < 8 {
                examples.append(message())
            }
        }
    }

    /// Checks that the keys of `a` and `b` compare as `expected` (-1, 0 or 1) and that neither
    /// key is a proper prefix of the other (prefix-freeness).
    mutating func checkPair<T: KeyComponent>(_ a: T, _ b: T, expected: Int) {
        let keyA = key(a)
        let keyB = key(b)
        let actual = KeyBytes.compare(keyA, keyB)
        check(
            actual == expected,
            "order of \(describe(a)) and \(describe(b)): expected \(expected), keys compare \(actual) [\(hex(keyA))] vs [\(hex(keyB))]"
        )
        if keyA != keyB {
            let shorter = keyA.count < keyB.count ? keyA : keyB
            let longer = keyA.count < keyB.count ? keyB : keyA
            check(
                !longer.starts(with: shorter),
                "key of \(describe(a)) [\(hex(keyA))] and of \(describe(b)) [\(hex(keyB))]: one is a proper prefix of the other"
            )
        }
    }

    /// Checks that `value` decodes from its key to a value `matches` accepts, consuming every byte.
    mutating func checkRoundTrip<T: KeyComponent>(_ value: T, matches: (T) -> Bool) {
        let bytes = key(value)
        do {
            let decoded = try decodeWhole(T.self, bytes)
            check(matches(decoded), "\(describe(value)) decoded as \(describe(decoded)) from [\(hex(bytes))]")
        } catch {
            check(false, "\(describe(value)) failed to decode from [\(hex(bytes))]: \(error)")
        }
    }

    /// Records the result as one expectation.
    func expectNoFailures(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(cases > 0, "no cases were checked", sourceLocation: sourceLocation)
        #expect(
            failureCount == 0,
            "\(failureCount) of \(cases) checks failed; first: \n\(examples.joined(separator: "\n"))",
            sourceLocation: sourceLocation)
    }
}
