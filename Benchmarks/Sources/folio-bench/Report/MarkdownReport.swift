import Foundation

/// The `--markdown` file: the machine, then one table per suite.
enum MarkdownReport {
    static func render(_ report: JSONReport) -> String {
        let m = report.machine
        var out = "# Folio benchmarks\n\n"
        out +=
            "- Machine: \(m.cpuModel), \(m.logicalCores) logical cores, \(Format.bytes(Int64(m.memoryBytes))) memory; \(m.os); \(m.kernel) (\(m.architecture))\n"
        let disk = m.disk
        out +=
            "- Disk: work directory `\(disk.workDirectory)` on \(disk.device ?? "?") (\(disk.fileSystem ?? "?"), mounted at \(disk.mountPoint ?? "?")\(disk.rotational.map { $0 ? ", rotational" : ", non-rotational" } ?? ""))\n"
        out +=
            "- Build: Swift \(m.swiftVersion), \(m.buildConfiguration); SQLite \(m.sqliteVersion) (GRDB.swift 7.10.0)\n"
        out += "- Peak RSS: \(m.peakRSSMethod)\n"
        if let start = m.loadAverageAtStart, let end = m.loadAverageAtEnd {
            out += "- Load average (1/5/15 min): \(start) at start, \(end) at end\n"
        }
        out +=
            "- Run: `folio-bench \(m.arguments.joined(separator: " "))` at \(m.date); seconds are medians of the runs listed in the JSON\n"
        for suite in Arguments.allSuites {
            let rows = report.results.filter { $0.suite == suite }
            guard !rows.isEmpty else { continue }
            out += "\n## \(suite)\n\n"
            out += "| workload | system | n | durability | seconds | ops/s | bytes on disk | peak RSS | notes |\n"
            out += "|---|---|---:|---|---:|---:|---:|---:|---|\n"
            for r in rows {
                let notes = r.notes.joined(separator: "; ").replacingOccurrences(of: "|", with: "\\|")
                guard r.status == .ok, let seconds = r.seconds else {
                    out +=
                        "| \(r.workload) | \(r.system) | \(Format.grouped(r.n)) | \(r.durability) | not yet available | | | | \(notes) |\n"
                    continue
                }
                let time = Format.seconds(seconds) + (r.secondsUnit == "per-operation" ? " per op" : "")
                let rate = r.operationsPerSecond.map(Format.rate) ?? ""
                let bytes = r.bytesOnDisk.map(Format.bytes) ?? "–"
                var rss = r.peakRSSBytes.map { Format.bytes(Int64($0)) } ?? ""
                if r.peakRSSScope == PeakMemory.Scope.childProcess.rawValue { rss += " (child)" }
                if r.peakRSSScope == PeakMemory.Scope.process.rawValue { rss += " (process)" }
                out +=
                    "| \(r.workload) | \(r.system) | \(Format.grouped(r.n)) | \(r.durability) | \(time) | \(rate) | \(bytes) | \(rss) | \(notes) |\n"
            }
        }
        return out
    }

    static func write(_ report: JSONReport, to path: String) throws {
        try render(report).write(toFile: path, atomically: true, encoding: .utf8)
    }
}
