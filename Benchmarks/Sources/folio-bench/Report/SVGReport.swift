import Foundation

/// The `--svg DIR` output: `<suite>.svg` bar charts (seconds per workload, one bar per
/// system) for every suite with figures, and `scale-<workload>.svg` line charts (seconds
/// per operation against n). Returns the files written.
enum SVGReport {
    static let systemOrder = ["folio", "grdb", "floor"]

    @discardableResult
    static func write(_ results: [BenchResult], to directory: String, logarithmic: Bool) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var written: [String] = []
        func save(_ name: String, _ svg: String) throws {
            let path = (directory as NSString).appendingPathComponent(name)
            try svg.write(toFile: path, atomically: true, encoding: .utf8)
            written.append(path)
        }
        for suite in ["crud", "engine", "observe", "mp"] {
            let rows = results.filter { $0.suite == suite }
            guard rows.contains(where: { $0.status == .ok }) else { continue }
            try save("\(suite).svg", barChart(suite: suite, rows: rows, logarithmic: logarithmic).render())
        }
        let scaleRows = results.filter { $0.suite == "scale" }
        if scaleRows.contains(where: { $0.status == .ok }) {
            for workload in ScaleSuite.workloadNames {
                let rows = scaleRows.filter { $0.workload == workload }
                try save("scale-\(workload).svg", scaleChart(workload: workload, rows: rows).render())
            }
        }
        return written
    }

    static func barChart(suite: String, rows: [BenchResult], logarithmic: Bool) -> SVGBarChart {
        let series = systemOrder.filter { system in rows.contains { $0.system == system } }
        var groups: [SVGBarChart.Group] = []
        for row in rows {
            let label = row.secondsUnit == "per-operation" ? "\(row.workload) (per op)" : row.workload
            let value: Double? = row.status == .ok ? row.seconds : nil
            if let index = groups.firstIndex(where: { $0.label == label }) {
                groups[index].values.updateValue(value, forKey: row.system)
            } else {
                var values: [String: Double?] = [:]
                values.updateValue(value, forKey: row.system)
                groups.append(SVGBarChart.Group(label: label, values: values))
            }
        }
        let durability = Set(rows.map(\.durability)).sorted().joined(separator: "/")
        let sizes = Set(rows.map(\.n))
        let size = sizes.count == 1 ? "n = \(Format.grouped(sizes.first!)), " : ""
        return SVGBarChart(
            title: "\(suite): seconds per workload (\(size)durability \(durability); lower is better)",
            valueLabel: "seconds, median", series: series, groups: groups, logarithmic: logarithmic)
    }

    static func scaleChart(workload: String, rows: [BenchResult]) -> SVGLineChart {
        let systems = systemOrder.filter { system in rows.contains { $0.system == system } }
        let series = systems.map { system in
            SVGLineChart.Series(
                name: system,
                points: rows.filter { $0.system == system && $0.status == .ok }.compactMap { row in
                    guard let seconds = row.seconds, row.operations > 0 else { return nil }
                    return (x: Double(row.n), y: seconds / Double(row.operations))
                })
        }
        let durability = Set(rows.map(\.durability)).sorted().joined(separator: "/")
        return SVGLineChart(
            title: "scale: \(workload), seconds per record (durability \(durability))",
            xLabel: "records in the store (n)", yLabel: "seconds per record", series: series)
    }
}
