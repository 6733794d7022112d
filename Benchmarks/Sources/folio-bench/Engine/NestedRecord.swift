import Foundation

/// A larger record for the JSON coder rows: an order with 20 nested lines, each with
/// strings, integers, an optional, a double and a small dictionary (about 3 KB of JSON),
/// the shape where a coder's per-container costs show.
struct NestedRecord: Codable, Sendable, Equatable {
    struct Line: Codable, Sendable, Equatable {
        var sku: String
        var quantity: Int
        var unitPrice: Double
        var discount: Double?
        var note: String?
        var attributes: [String: String]
    }

    var id: Int64
    var customer: String
    var placedAt: Date
    var paid: Bool
    var lines: [Line]
    var tags: [String]

    /// The record with `id`, the same in every run.
    static func make(id: Int64) -> NestedRecord {
        var rng = SplitMix64(seed: UInt64(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15)
        let lines = (0..<20).map { index -> Line in
            Line(
                sku: "SKU-\(id)-\(index)", quantity: Int(rng.next() % 50) + 1,
                unitPrice: Double(rng.next() % 100_000) / 100,
                discount: rng.next() % 3 == 0 ? Double(rng.next() % 30) / 100 : nil,
                note: rng.next() % 4 == 0 ? "gift wrap, \"fragile\"\n" : nil,
                attributes: ["color": ["red", "green", "blue"][Int(rng.next() % 3)], "size": "\(rng.next() % 10)"])
        }
        return NestedRecord(
            id: id, customer: "customer-\(id % 997)", placedAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(id)),
            paid: id % 2 == 0, lines: lines, tags: ["order", "batch-\(id % 13)"])
    }
}
