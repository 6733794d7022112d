/// A grouped bar chart drawn as SVG text: one group per workload, one bar per system
/// (Folio, GRDB, floor), on a linear or logarithmic value axis. A missing value (a system
/// not written yet) shows "n/a" in its slot instead of a bar.
struct SVGBarChart {
    struct Group {
        var label: String
        /// Value per series name; nil where the series has no figure.
        var values: [String: Double?]
    }

    var title: String
    var valueLabel: String
    /// Series in drawing and legend order.
    var series: [String]
    var groups: [Group]
    var logarithmic = true
    /// Formats a value for tick and bar labels.
    var format: (Double) -> String = Format.seconds

    func render() -> String {
        let barWidth = 22.0, barGap = 3.0, groupGap = 26.0
        let left = 84.0, right = 24.0, top = 100.0, plotHeight = 300.0
        // Room below the plot for the longest workload label, drawn at -35° (about 6.5 px a
        // character at font size 12, sin 35° ≈ 0.57).
        let longestLabel = groups.map(\.label.count).max() ?? 0
        let bottom = max(110.0, 30 + Double(longestLabel) * 3.8)
        let groupWidth = Double(series.count) * (barWidth + barGap) - barGap
        let plotWidth = max(420, Double(groups.count) * (groupWidth + groupGap) + groupGap)
        let width = left + plotWidth + right, height = top + plotHeight + bottom
        let values = groups.flatMap { $0.values.values.compactMap { $0 } }
        let axis = ValueAxis(values: values, logarithmic: logarithmic)
        func y(_ value: Double) -> Double { top + plotHeight * (1 - min(1, max(0, axis.fraction(value)))) }

        var svg = SVG.header(width: width, height: height, title: title)
        // Legend.
        var legendX = left
        for name in series {
            svg += "<rect x=\"\(SVG.n(legendX))\" y=\"36\" width=\"12\" height=\"12\" fill=\"\(SVG.color(of: name))\"/>"
            svg += "<text x=\"\(SVG.n(legendX + 16))\" y=\"46\">\(SVG.escape(name))</text>\n"
            legendX += 24 + Double(name.count) * 7.5
        }
        // Grid and value axis.
        for tick in axis.ticks {
            let ty = y(tick)
            svg +=
                "<line x1=\"\(SVG.n(left))\" y1=\"\(SVG.n(ty))\" x2=\"\(SVG.n(left + plotWidth))\" y2=\"\(SVG.n(ty))\" stroke=\"#e2e8f0\"/>"
            svg +=
                "<text x=\"\(SVG.n(left - 6))\" y=\"\(SVG.n(ty + 4))\" text-anchor=\"end\">\(SVG.escape(format(tick)))</text>\n"
        }
        svg +=
            "<line x1=\"\(SVG.n(left))\" y1=\"\(SVG.n(top))\" x2=\"\(SVG.n(left))\" y2=\"\(SVG.n(top + plotHeight))\" stroke=\"#4a5568\"/>"
        svg +=
            "<line x1=\"\(SVG.n(left))\" y1=\"\(SVG.n(top + plotHeight))\" x2=\"\(SVG.n(left + plotWidth))\" y2=\"\(SVG.n(top + plotHeight))\" stroke=\"#4a5568\"/>\n"
        let scaleName = logarithmic ? "log scale" : "linear scale"
        svg +=
            "<text transform=\"translate(18 \(SVG.n(top + plotHeight / 2))) rotate(-90)\" text-anchor=\"middle\">\(SVG.escape("\(valueLabel) (\(scaleName))"))</text>\n"
        // Bars.
        for (index, group) in groups.enumerated() {
            let x0 = left + groupGap + Double(index) * (groupWidth + groupGap)
            for (slot, name) in series.enumerated() {
                let x = x0 + Double(slot) * (barWidth + barGap)
                guard let entry = group.values[name] else { continue }
                guard let value = entry else {
                    svg +=
                        "<text x=\"\(SVG.n(x + barWidth / 2))\" y=\"\(SVG.n(top + plotHeight - 4))\" text-anchor=\"middle\" font-size=\"9\" fill=\"#a0aec0\">n/a</text>\n"
                    continue
                }
                let barTop = y(value), base = top + plotHeight
                svg +=
                    "<rect x=\"\(SVG.n(x))\" y=\"\(SVG.n(barTop))\" width=\"\(SVG.n(barWidth))\" height=\"\(SVG.n(max(1, base - barTop)))\" fill=\"\(SVG.color(of: name))\">"
                svg += "<title>\(SVG.escape("\(group.label) \(name): \(format(value))"))</title></rect>"
                svg +=
                    "<text transform=\"translate(\(SVG.n(x + barWidth / 2 + 3)) \(SVG.n(barTop - 4))) rotate(-90)\" font-size=\"9\">\(SVG.escape(format(value)))</text>\n"
            }
            let labelX = x0 + groupWidth / 2
            svg +=
                "<text transform=\"translate(\(SVG.n(labelX)) \(SVG.n(top + plotHeight + 14))) rotate(-35)\" text-anchor=\"end\">\(SVG.escape(group.label))</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }
}
