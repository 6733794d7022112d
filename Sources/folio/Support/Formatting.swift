import Foundation

/// How numbers, sizes, times and paths are written in the tool's output.
enum Format {
    /// `512 bytes`, `10.0 KiB`, `52.3 MiB`, `1.2 GiB` (binary units, one decimal).
    static func bytes(_ count: UInt64) -> String {
        if count < 1024 { return "\(count) byte\(count == 1 ? "" : "s")" }
        let units = ["KiB", "MiB", "GiB", "TiB", "PiB"]
        var value = Double(count) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return String(format: "%.1f", value) + " " + units[unit]
    }

    /// `512 bytes`, `2.4 MiB (2,476,147 bytes)`: the exact count too when rounded.
    static func exactBytes(_ count: UInt64) -> String {
        count < 1024 ? bytes(count) : "\(bytes(count)) (\(Self.count(count)) bytes)"
    }

    /// `1,234,567`.
    static func count<N: BinaryInteger>(_ number: N) -> String {
        let digits = String(number.magnitude)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return (number < 0 ? "-" : "") + grouped
    }

    /// `1 record`, `2,000 records`.
    static func count<N: BinaryInteger>(_ number: N, _ noun: String, plural: String? = nil) -> String {
        "\(count(number)) \(number == 1 ? noun : plural ?? noun + "s")"
    }

    /// `0.4 ms`, `84.2 ms`, `1.52 s`.
    static func duration(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        if seconds < 1 { return String(format: "%.1f ms", seconds * 1000) }
        return String(format: "%.2f s", seconds)
    }

    /// `42%` of `part` in `whole` (0 if `whole` is 0).
    static func percent(_ part: UInt64, of whole: UInt64) -> String {
        guard whole > 0 else { return "0%" }
        return String(format: "%.0f%%", min(100, Double(part) * 100 / Double(whole)))
    }

    /// A microsecond timestamp since 1970 as ISO 8601 UTC with milliseconds.
    static func timestamp(microseconds: UInt64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(microseconds) / 1_000_000))
    }

    /// `path` as a shell word: unchanged if it needs no quoting, else in single quotes.
    static func shellWord(_ path: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=+,@%")
        if !path.isEmpty && path.allSatisfy({ safe.contains($0) }) { return path }
        return "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// `text` broken into lines of at most `width` characters, at spaces.
    static func wrap(_ text: String, width: Int, indent: String = "") -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if !line.isEmpty && indent.count + line.count + 1 + word.count > width {
                lines.append(indent + line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(indent + line) }
        return lines
    }

    /// Lines whose columns line up: every column but the last padded to its widest cell.
    /// With a `width`, the last column is wrapped to fit, continuing under itself.
    static func table(_ rows: [[String]], indent: String = "", width: Int? = nil) -> [String] {
        guard let columns = rows.map(\.count).max(), columns > 0 else { return [] }
        var widths = [Int](repeating: 0, count: columns)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        var lines: [String] = []
        for row in rows {
            var line = indent
            for (index, cell) in row.enumerated() where index < row.count - 1 {
                line += cell + String(repeating: " ", count: widths[index] - cell.count + 2)
            }
            let last = row.last ?? ""
            guard let width, line.count + last.count > width else {
                lines.append(line + last)
                continue
            }
            let hanging = String(repeating: " ", count: line.count)
            let wrapped = wrap(last, width: max(30, width - line.count))
            lines.append(line + (wrapped.first ?? ""))
            lines += wrapped.dropFirst().map { hanging + $0 }
        }
        return lines
    }
}
