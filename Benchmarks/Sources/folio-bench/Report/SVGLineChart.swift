import Foundation

/// A line chart drawn as SVG text, logarithmic on both axes: the scale curve (cost per
/// operation against store size), one line per system.
struct SVGLineChart {
    struct Series {
        var name: String
        /// (x, y) points with positive coordinates; empty for a system with no figures
        /// (shown in the legend as "not yet available").
        var points: [(x: Double, y: Double)]
    }

    var title: String
    var xLabel: String
    var yLabel: String
    var series: [Series]
    var formatX: (Double) -> String = { Format.count(Int($0)) }
    var formatY: (Double) -> String = Format.seconds

    func render() -> String {
        let left = 84.0, right = 64.0, top = 64.0, plotWidth = 520.0, plotHeight = 300.0, bottom = 60.0
        let width = left + plotWidth + right, height = top + plotHeight + bottom
        let all = series.flatMap(\.points)
        let xAxis = ValueAxis(values: all.map(\.x), logarithmic: true)
        let yAxis = ValueAxis(values: all.map(\.y), logarithmic: true)
        func px(_ x: Double) -> Double { left + plotWidth * xAxis.fraction(x) }
        func py(_ y: Double) -> Double { top + plotHeight * (1 - yAxis.fraction(y)) }

        var svg = SVG.header(width: width, height: height, title: title)
        var legendX = left
        for s in series {
            let label = s.points.isEmpty ? "\(s.name) (not yet available)" : s.name
            svg +=
                "<line x1=\"\(SVG.n(legendX))\" y1=\"42\" x2=\"\(SVG.n(legendX + 16))\" y2=\"42\" stroke=\"\(SVG.color(of: s.name))\" stroke-width=\"3\"\(s.points.isEmpty ? " stroke-dasharray=\"3 3\"" : "")/>"
            svg += "<text x=\"\(SVG.n(legendX + 20))\" y=\"46\">\(SVG.escape(label))</text>\n"
            legendX += 30 + Double(label.count) * 7
        }
        for tick in yAxis.ticks {
            svg +=
                "<line x1=\"\(SVG.n(left))\" y1=\"\(SVG.n(py(tick)))\" x2=\"\(SVG.n(left + plotWidth))\" y2=\"\(SVG.n(py(tick)))\" stroke=\"#e2e8f0\"/>"
            svg +=
                "<text x=\"\(SVG.n(left - 6))\" y=\"\(SVG.n(py(tick) + 4))\" text-anchor=\"end\">\(SVG.escape(formatY(tick)))</text>\n"
        }
        for tick in xAxis.ticks {
            svg +=
                "<line x1=\"\(SVG.n(px(tick)))\" y1=\"\(SVG.n(top))\" x2=\"\(SVG.n(px(tick)))\" y2=\"\(SVG.n(top + plotHeight))\" stroke=\"#e2e8f0\"/>"
            svg +=
                "<text x=\"\(SVG.n(px(tick)))\" y=\"\(SVG.n(top + plotHeight + 18))\" text-anchor=\"middle\">\(SVG.escape(formatX(tick)))</text>\n"
        }
        svg +=
            "<rect x=\"\(SVG.n(left))\" y=\"\(SVG.n(top))\" width=\"\(SVG.n(plotWidth))\" height=\"\(SVG.n(plotHeight))\" fill=\"none\" stroke=\"#4a5568\"/>\n"
        svg +=
            "<text x=\"\(SVG.n(left + plotWidth / 2))\" y=\"\(SVG.n(height - 14))\" text-anchor=\"middle\">\(SVG.escape(xLabel + " (log scale)"))</text>\n"
        svg +=
            "<text transform=\"translate(18 \(SVG.n(top + plotHeight / 2))) rotate(-90)\" text-anchor=\"middle\">\(SVG.escape(yLabel + " (log scale)"))</text>\n"
        for s in series where !s.points.isEmpty {
            let color = SVG.color(of: s.name)
            let path = s.points.sorted { $0.x < $1.x }.map { "\(SVG.n(px($0.x))),\(SVG.n(py($0.y)))" }.joined(
                separator: " ")
            svg += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2.5\"/>\n"
            for point in s.points {
                svg += "<circle cx=\"\(SVG.n(px(point.x)))\" cy=\"\(SVG.n(py(point.y)))\" r=\"4\" fill=\"\(color)\">"
                svg += "<title>\(SVG.escape("\(s.name) n=\(formatX(point.x)): \(formatY(point.y))"))</title></circle>"
                svg +=
                    "<text x=\"\(SVG.n(px(point.x) + 6))\" y=\"\(SVG.n(py(point.y) - 6))\" font-size=\"9\">\(SVG.escape(formatY(point.y)))</text>\n"
            }
        }
        svg += "</svg>\n"
        return svg
    }
}
