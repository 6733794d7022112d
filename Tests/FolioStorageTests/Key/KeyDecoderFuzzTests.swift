import FolioTestSupport
import Foundation
import FolioStorage
import Testing

@Suite("KeyDecoder fuzzing")
struct KeyDecoderFuzzTests {
    /// Outcome counts for one decoded type.
    private struct Outcome {
        var decoded = 0
        var rejected = 0
    }

    /// Decodes one `T` from the front of `bytes`. A success must re-encode to exactly the bytes
    /// consumed (decoding accepts only canonical encodings); a failure must be `invalidKey`.
    private func attempt<T: KeyComponent>(
        _ type: T.Type, _ bytes: [UInt8], _ outcome: inout Outcome, _ log: inout KeyPropertyLog
    ) {
        var decoder = KeyDecoder(bytes)
        do {
            let value = try decoder.decode(T.self)
            outcome.decoded += 1
            let consumed = Array(bytes[..<decoder.offset])
            log.check(
                key(value) == consumed,
                "\(T.self) decoded \(describe(value)) from [\(hex(consumed))] but re-encodes to [\(hex(key(value)))]")
        } catch {
            outcome.rejected += 1
            if case .invalidKey = error {
                log.check(true, "")
            } else {
                log.check(false, "\(T.self) threw \(error) instead of invalidKey for [\(hex(bytes))]")
            }
        }
    }

    /// A valid encoding of something, as raw material for mutation.
    private func validKey(_ rng: inout SplitMix64) -> [UInt8] {
        switch rng.index(8) {
        case 0: return KeyEncoding.encode(rng.interestingString(maxScalars: 4), rng.interestingInt64())
        case 1: return key(rng.interestingDouble())
        case 2: return key(rng.interestingBytes())
        case 3: return key(rng.chance(1, in: 2) ? nil : Int32(truncatingIfNeeded: rng.next()) as Int32?)
        case 4: return key(rng.uuid())
        case 5: return KeyEncoding.encode(rng.chance(1, in: 2), rng.interestingString(maxScalars: 3) as String?)
        case 6: return key(rng.interestingString(maxScalars: 6))
        default: return key(UInt8(truncatingIfNeeded: rng.next()))
        }
    }

    /// `bytes` with one to three random edits: a bit flipped, a byte set to a special value,
    /// truncation, insertion, or random bytes appended.
    private func mutate(_ bytes: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var result = bytes
        for _ in 0..<(1 + rng.index(3)) {
            switch rng.index(5) {
            case 0 where !result.isEmpty: result[rng.index(result.count)] ^= UInt8(1) << UInt8(rng.index(8))
            case 1 where !result.isEmpty: result[rng.index(result.count)] = rng.interestingByte()
            case 2 where !result.isEmpty: result.removeLast(1 + rng.index(result.count))
            case 3: result.insert(rng.interestingByte(), at: rng.index(result.count + 1))
            default: result += rng.interestingBytes(maxLength: 4)
            }
        }
        return result
    }

    @Test("100,000 random and mutated byte strings never trap: each type decodes canonically or throws invalidKey")
    func fuzz() {
        var rng = SplitMix64(seed: 0xF022)
        var log = KeyPropertyLog()
        let types: [any KeyComponent.Type] = [
            String.self, [UInt8].self, String?.self, Bool.self, Int8.self, Int.self, UInt16.self,
            Double.self, Float.self, UUID.self, Date.self, Data.self, Int32?.self, UInt64.self, Bool??.self,
        ]
        var outcomes = [Outcome](repeating: Outcome(), count: types.count)
        func run(_ slot: Int, _ bytes: [UInt8]) {
            switch slot {
            case 0: attempt(String.self, bytes, &outcomes[slot], &log)
            case 1: attempt([UInt8].self, bytes, &outcomes[slot], &log)
            case 2: attempt(String?.self, bytes, &outcomes[slot], &log)
            case 3: attempt(Bool.self, bytes, &outcomes[slot], &log)
            case 4: attempt(Int8.self, bytes, &outcomes[slot], &log)
            case 5: attempt(Int.self, bytes, &outcomes[slot], &log)
            case 6: attempt(UInt16.self, bytes, &outcomes[slot], &log)
            case 7: attempt(Double.self, bytes, &outcomes[slot], &log)
            case 8: attempt(Float.self, bytes, &outcomes[slot], &log)
            case 9: attempt(UUID.self, bytes, &outcomes[slot], &log)
            case 10: attempt(Date.self, bytes, &outcomes[slot], &log)
            case 11: attempt(Data.self, bytes, &outcomes[slot], &log)
            case 12: attempt(Int32?.self, bytes, &outcomes[slot], &log)
            case 13: attempt(UInt64.self, bytes, &outcomes[slot], &log)
            default: attempt(Bool??.self, bytes, &outcomes[slot], &log)
            }
        }
        for iteration in 0..<100_000 {
            let bytes =
                rng.chance(2, in: 5)
                ? (0..<rng.index(26)).map { _ in rng.interestingByte() }
                : mutate(validKey(&rng), &rng)
            // Every input is decoded as a String (the most intricate decoder) and as one other
            // type in rotation, so every other type sees over 7,000 inputs. (The budget is set by
            // Swift Testing, which captures a backtrace for every thrown error.)
            run(0, bytes)
            run(1 + iteration % 14, bytes)
            // Whole composite keys: either they decode and re-encode exactly, or throw invalidKey.
            if iteration % 4 == 0 {
                do {
                    let (name, id) = try KeyEncoding.decode(bytes, as: String.self, Int64.self)
                    log.check(
                        KeyEncoding.encode(name, id) == bytes,
                        "(String, Int64) decoded from [\(hex(bytes))] does not re-encode")
                } catch {
                    if case .invalidKey = error { log.check(true, "") } else { log.check(false, "\(error)") }
                }
            }
        }
        log.expectNoFailures()
        // The fuzzer must reach both outcomes for every type, or it proves little.
        for (type, outcome) in zip(types, outcomes) {
            #expect(
                outcome.decoded > 0 && outcome.rejected > 0,
                "\(type): \(outcome.decoded) decoded, \(outcome.rejected) rejected")
        }
    }
}
