import Foundation
import FolioTestSupport
import Testing
import FolioJSON

/// An `encode(to:)` that drives the encoder with random operations, in random order:
/// containers of every kind, nested containers and super encoders written to long after
/// their parent moved on, and nested programs as values. The same seed makes the same
/// calls, so Folio's and Foundation's outputs can be compared.
private struct EncOrderProgram: Encodable {
    let seed: UInt64
    let budget: Int

    func encode(to encoder: any Encoder) throws {
        var random = SplitMix64(seed: seed)
        var keyed: [KeyedEncodingContainer<EncKey>] = []
        var unkeyed: [any UnkeyedEncodingContainer] = []
        var encoders: [any Encoder] = []
        var usedSuper: Set<Int> = []
        var counter = 0
        func nextKey() -> EncKey {
            counter += 1
            return EncKey("keyNumber\(counter)")
        }

        switch random.below(4) {
        case 0: unkeyed.append(encoder.unkeyedContainer())
        case 1:
            var single = encoder.singleValueContainer()
            if random.below(2) == 0 {
                try single.encode("single \(seed % 100)")
            } else {
                try single.encode(EncOrderProgram(seed: random.next(), budget: budget / 2))
            }
            return
        default: keyed.append(encoder.container(keyedBy: EncKey.self))
        }

        for _ in 0..<budget {
            let useKeyed = !keyed.isEmpty && (unkeyed.isEmpty || random.below(2) == 0)
            let action = random.below(10)
            if useKeyed {
                let target = random.below(keyed.count)
                let key = nextKey()
                switch action {
                case 0: try keyed[target].encode(random.below(1000), forKey: key)
                case 1: try keyed[target].encode("text \(random.below(100))\n\"", forKey: key)
                case 2: try keyed[target].encode(Double(random.below(10_000)) / 8, forKey: key)
                case 3: try keyed[target].encodeNil(forKey: key)
                case 4: keyed.append(keyed[target].nestedContainer(keyedBy: EncKey.self, forKey: key))
                case 5: unkeyed.append(keyed[target].nestedUnkeyedContainer(forKey: key))
                case 6:
                    // One `"super"` key per object: a repeated key is where the two
                    // encoders differ (Folio writes both, Foundation keeps one).
                    if random.below(2) == 0, !usedSuper.contains(target) {
                        usedSuper.insert(target)
                        encoders.append(keyed[target].superEncoder())
                    } else {
                        encoders.append(keyed[target].superEncoder(forKey: key))
                    }
                case 7 where budget > 2:
                    try keyed[target].encode(EncOrderProgram(seed: random.next(), budget: budget / 3), forKey: key)
                default: try keyed[target].encode([random.below(9), random.below(9)], forKey: key)
                }
            } else if !unkeyed.isEmpty {
                let target = random.below(unkeyed.count)
                switch action {
                case 0: try unkeyed[target].encode(random.below(1000))
                case 1: try unkeyed[target].encode("u\(random.below(100))")
                case 2: try unkeyed[target].encode(random.below(2) == 0)
                case 3: try unkeyed[target].encodeNil()
                case 4: keyed.append(unkeyed[target].nestedContainer(keyedBy: EncKey.self))
                case 5: unkeyed.append(unkeyed[target].nestedUnkeyedContainer())
                case 6:
                    // Used at once: Foundation inserts an array's super encoder when it is
                    // released, at the count it saw when made, so holding it while the
                    // array grows gives an order that depends on release timing. Folio
                    // gives it the next position when it is asked for.
                    var single = unkeyed[target].superEncoder().singleValueContainer()
                    try single.encode("super \(random.below(9))")
                case 7 where budget > 2:
                    try unkeyed[target].encode(EncOrderProgram(seed: random.next(), budget: budget / 3))
                default: try unkeyed[target].encode(["k": random.below(9)])
                }
            }
            // Now and then, start using one of the super encoders.
            if !encoders.isEmpty, random.below(4) == 0 {
                let superEncoder = encoders.remove(at: random.below(encoders.count))
                switch random.below(3) {
                case 0: keyed.append(superEncoder.container(keyedBy: EncKey.self))
                case 1: unkeyed.append(superEncoder.unkeyedContainer())
                default:
                    var single = superEncoder.singleValueContainer()
                    try single.encode(random.below(50))
                }
            }
        }
    }
}

@Suite struct EncoderOrderFuzzTests {
    @Test func randomOperationOrdersMatchFoundation() throws {
        var random = SplitMix64(seed: 2024)
        for round in 0..<400 {
            let program = EncOrderProgram(seed: random.next(), budget: 4 + round % 40)
            let snakeCase = round % 3 == 0
            let folio = try encFolioText(program) { if snakeCase { $0.keyEncodingStrategy = .convertToSnakeCase } }
            let foundation = try encFoundationText(program) {
                if snakeCase { $0.keyEncodingStrategy = .convertToSnakeCase }
            }
            let left =
                try JSONSerialization.jsonObject(with: Data(folio.utf8), options: [.fragmentsAllowed]) as! NSObject
            let right =
                try JSONSerialization.jsonObject(with: Data(foundation.utf8), options: [.fragmentsAllowed]) as! NSObject
            #expect(left == right, "round \(round)\nfolio      \(folio)\nfoundation \(foundation)")
            if left != right { break }
            // The same value, encoded again, gives the same bytes.
            #expect(
                try encFolioText(program) { if snakeCase { $0.keyEncodingStrategy = .convertToSnakeCase } } == folio)
        }
    }
}
