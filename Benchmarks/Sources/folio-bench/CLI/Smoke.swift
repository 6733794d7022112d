import Foundation

/// `--smoke`: after a tiny run of the suites, checks that the report is complete and sane,
/// so CI notices a harness that no longer runs to the end or drops rows.
enum Smoke {
    /// Every (suite, workload, system, n) row the suites must produce.
    static func expectedRows(
        suites: [String], sizes: Sizes
    ) -> [(suite: String, workload: String, system: String, n: Int, available: Bool)] {
        var rows: [(String, String, String, Int, Bool)] = []
        for suite in suites {
            switch suite {
            case CrudSuite.name:
                for entry in CrudSystems.all {
                    for name in CrudWorkloads.names where name != "get-hot" || entry.name == FolioCrudSystem.systemName
                    {
                        rows.append((suite, name, entry.name, sizes.crudN, entry.type != nil))
                    }
                }
            case EngineSuite.name:
                rows.append((suite, "put-random", "folio", sizes.engineKeys, true))
                rows.append((suite, "get-random", "folio", sizes.engineKeys, true))
                rows.append((suite, "open", "folio", sizes.engineKeys, true))
                rows.append((suite, "commit-latency", "folio", sizes.commitCount, true))
                for name in EngineSuite.commitFloorWorkloads {
                    rows.append((suite, name, "floor", sizes.commitCount, true))
                }
                rows.append((suite, "json-encode-floor", "floor", sizes.crudN, true))
                rows.append((suite, "json-decode-floor", "floor", sizes.crudN, true))
                rows.append((suite, "json-encode", "folio", sizes.crudN, true))
                rows.append((suite, "json-decode", "folio", sizes.crudN, true))
                for name in ["json-encode-nested", "json-decode-nested"] {
                    for system in ["floor", "folio"] {
                        rows.append((suite, name, system, max(1, sizes.crudN / 5), true))
                    }
                }
            case ScaleSuite.name:
                for n in sizes.scaleSizes {
                    for entry in CrudSystems.all {
                        for name in ScaleSuite.workloadNames {
                            rows.append((suite, name, entry.name, n, entry.type != nil))
                        }
                    }
                }
            case ObserveSuite.name:
                for system in ObserveSystems.all {
                    for name in ObserveSuite.workloadNames {
                        rows.append((suite, name, system.systemName, sizes.crudN, true))
                    }
                }
            case LocksSuite.name:
                for kind in LocksSuite.Kind.allCases {
                    for system in LocksSuite.systems(kind) {
                        rows.append((suite, kind.rawValue, system, LocksSuite.operationsPerThread(sizes), true))
                    }
                }
            case KeyValueSuite.name:
                for row in KeyValueSuite.rows(sizes) { rows.append((suite, row.workload, row.system, row.n, true)) }
            case MultiProcessSuite.name:
                for entry in CrudSystems.all {
                    for name in MultiProcessSuite.workloadNames {
                        rows.append((suite, name, entry.name, sizes.crudN, entry.type != nil))
                    }
                }
            case HistorySuite.name:
                for name in HistorySuite.workloadNames { rows.append((suite, name, "folio", sizes.crudN, true)) }
            case RestoreSuite.name:
                for name in RestoreSuite.workloadNames {
                    rows.append((suite, name, "folio", sizes.restoreGenerations, true))
                }
            case ReplicationSuite.name:
                for name in ReplicationSuite.workloadNames { rows.append((suite, name, "folio", sizes.crudN, true)) }
            default:
                break
            }
        }
        return rows
    }

    /// Checks the written files against the expected rows; returns a summary or throws.
    static func verify(
        suites: [String], sizes: Sizes, runs: Int, jsonPath: String, markdownPath: String, svgFiles: [String]
    ) throws -> String {
        let report = try JSONReport.read(from: jsonPath)
        var problems: [String] = []
        let expected = expectedRows(suites: suites, sizes: sizes)
        for row in expected {
            let matches = report.results.filter {
                $0.suite == row.suite && $0.workload == row.workload && $0.system == row.system && $0.n == row.n
            }
            guard matches.count == 1, let result = matches.first else {
                problems.append("\(row.suite)/\(row.workload)/\(row.system)/n=\(row.n): \(matches.count) rows")
                continue
            }
            if row.available {
                let sane =
                    result.status == .ok && (result.seconds ?? 0) > 0 && result.samples.count == runs
                    && (result.operationsPerSecond ?? 0) > 0 && (result.peakRSSBytes ?? 0) > 0
                if !sane { problems.append("\(row.suite)/\(row.workload)/\(row.system): incomplete figures") }
            } else if result.status != .notAvailable || result.seconds != nil {
                problems.append("\(row.suite)/\(row.workload)/\(row.system): should be not yet available")
            }
            if result.durability.isEmpty { problems.append("\(row.suite)/\(row.workload): no durability") }
        }
        if report.results.count != expected.count {
            problems.append("\(report.results.count) rows, expected \(expected.count)")
        }
        let markdown = (try? String(contentsOfFile: markdownPath, encoding: .utf8)) ?? ""
        for row in expected where !markdown.contains("| \(row.workload) | \(row.system) |") {
            problems.append("markdown lacks \(row.suite)/\(row.workload)/\(row.system)")
        }
        for file in svgFiles {
            let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            if !text.hasPrefix("<svg") || !text.hasSuffix("</svg>\n") {
                problems.append("\(file) is not an SVG document")
            }
        }
        if suites.contains(CrudSuite.name), !svgFiles.contains(where: { $0.hasSuffix("/crud.svg") }) {
            problems.append("no crud.svg")
        }
        if suites.contains(ScaleSuite.name), !svgFiles.contains(where: { $0.hasSuffix("/scale-get-by-id.svg") }) {
            problems.append("no scale chart")
        }
        guard problems.isEmpty else {
            throw BenchError.harness("smoke check failed:\n  " + problems.joined(separator: "\n  "))
        }
        return
            "smoke check passed: \(expected.count) rows (\(expected.filter(\.available).count) measured), markdown, \(svgFiles.count) SVG files"
    }
}
