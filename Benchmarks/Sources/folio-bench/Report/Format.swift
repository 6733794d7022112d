import Foundation

/// Human-readable numbers for progress lines, the markdown table and chart labels.
enum Format {
    /// `812 ns`, `3.41 µs`, `12.3 ms`, `1.52 s`; negative spans (an instant before another)
    /// `-139 µs`.
    static func seconds(_ s: Double) -> String {
        if s < 0 { return "-" + seconds(-s) }
        if s < 1e-6 { return String(format: "%.0f ns", s * 1e9) }
        if s < 1e-3 { return String(format: "%.3g µs", s * 1e6) }
        if s < 1 { return String(format: "%.3g ms", s * 1e3) }
        return String(format: "%.3g s", s)
    }

    /// `1,234,567` or `12.3` for small rates.
    static func rate(_ r: Double) -> String {
        if r < 100 { return String(format: "%.3g", r) }
        return grouped(Int(r.rounded()))
    }

    /// An integer with thousands separators: `1,000,000`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (i, ch) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return value < 0 ? "-" + out : out
    }

    /// `512 B`, `3.2 KiB`, `45.6 MiB`, `1.20 GiB`.
    static func bytes(_ b: Int64) -> String {
        let v = Double(b)
        if v < 1024 { return "\(b) B" }
        if v < 1024 * 1024 { return String(format: "%.1f KiB", v / 1024) }
        if v < 1024 * 1024 * 1024 { return String(format: "%.1f MiB", v / 1_048_576) }
        return String(format: "%.2f GiB", v / 1_073_741_824)
    }

    /// A short size label for axes: `1k`, `10k`, `1M`.
    static func count(_ n: Int) -> String {
        if n >= 1_000_000, n % 1_000_000 == 0 { return "\(n / 1_000_000)M" }
        if n >= 1_000, n % 1_000 == 0 { return "\(n / 1_000)k" }
        return "\(n)"
    }
}
