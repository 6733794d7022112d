import Foundation

/// Shared pieces of the hand-written SVG charts: escaping, number formatting, and a value
/// axis that is linear or logarithmic.
enum SVG {
    /// Escapes text for an SVG text node or attribute.
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// A coordinate with at most one decimal.
    static func n(_ value: Double) -> String { String(format: "%.1f", value) }

    /// The fill colour of a system's bars and lines.
    static func color(of system: String) -> String {
        switch system {
        case "folio": return "#2b6cb0"
        case "grdb": return "#dd6b20"
        case "floor": return "#718096"
        default: return "#38a169"
        }
    }

    static func header(width: Double, height: Double, title: String) -> String {
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(n(width))" height="\(n(height))" viewBox="0 0 \(n(width)) \(n(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(n(width / 2))" y="24" text-anchor="middle" font-size="16" font-weight="bold">\(escape(title))</text>

        """
    }
}

/// A value axis mapping values to pixel offsets (0 at the bottom), linear from zero or
/// logarithmic over whole decades.
struct ValueAxis {
    let logarithmic: Bool
    let low: Double
    let high: Double

    /// An axis covering `values` (positive values only for a logarithmic axis).
    init(values: [Double], logarithmic: Bool) {
        self.logarithmic = logarithmic
        let positive = values.filter { $0 > 0 && $0.isFinite }
        if logarithmic {
            let minimum = positive.min() ?? 1, maximum = positive.max() ?? 10
            var lowExp = floor(log10(minimum)), highExp = ceil(log10(maximum))
            if highExp <= lowExp { highExp = lowExp + 1 }
            if lowExp.isNaN { lowExp = 0 }
            low = pow(10, lowExp)
            high = pow(10, highExp)
        } else {
            low = 0
            high = Self.niceCeiling(positive.max() ?? 1)
        }
    }

    /// The fraction (0...1) of the axis at which `value` lies.
    func fraction(_ value: Double) -> Double {
        if logarithmic {
            guard value > 0 else { return 0 }
            return (log10(value) - log10(low)) / (log10(high) - log10(low))
        }
        return high > low ? (value - low) / (high - low) : 0
    }

    /// Tick values: every decade for a log axis, five even steps for a linear one.
    var ticks: [Double] {
        if logarithmic {
            var ticks: [Double] = []
            var value = low
            while value <= high * 1.0001 {
                ticks.append(value)
                value *= 10
            }
            return ticks
        }
        return (0...5).map { low + (high - low) * Double($0) / 5 }
    }

    /// 1, 2, 5 × a power of ten, at least `value`.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        let magnitude = pow(10, floor(log10(value)))
        for step in [1.0, 2.0, 5.0, 10.0] where step * magnitude >= value { return step * magnitude }
        return 10 * magnitude
    }
}
