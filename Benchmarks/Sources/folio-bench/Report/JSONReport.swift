import Foundation

/// The `--json` file: `{"machine": {...}, "results": [...]}`.
struct JSONReport: Codable {
    var machine: MachineInfo
    var results: [BenchResult]

    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    static func read(from path: String) throws -> JSONReport {
        try JSONDecoder().decode(JSONReport.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }
}
