import Braid

#if canImport(Glibc)
    import Glibc
#endif

/// A chart of a benchmark as hand-written SVG, with no dependencies: median throughput against connection count
/// (log₂ scale), min–max bars over the runs, linear scaling from the baseline for reference, and the recommended
/// count marked. It is a standalone file that reads well in a browser and in a README on a light or dark page.
///
/// Every median point carries `data-connections`, `data-median`, `data-min` and `data-max` attributes (bytes per
/// second), so a program can read the series back.
public struct BenchChart: Sendable {
    /// The report drawn.
    public let report: BenchReport
    /// The canvas width, in pixels.
    public var width: Double = 760
    /// The canvas height, in pixels.
    public var height: Double = 480

    private static let medianColour = "#2563eb"
    private static let barColour = "#1e40af"
    private static let referenceColour = "#9ca3af"
    private static let recommendedColour = "#16a34a"
    private static let textColour = "#111827"
    private static let mutedColour = "#4b5563"
    private static let gridColour = "#e5e7eb"

    /// A chart of `report`.
    public init(report: BenchReport) {
        self.report = report
    }

    /// The plot area: where the data goes, inside the margins that hold the titles, legend and labels.
    private var plot: (left: Double, right: Double, top: Double, bottom: Double) {
        (84, width - 32, 100, height - 80)
    }

    /// The whole SVG document.
    public func svg() -> String {
        let scale = scale()
        var svg = header(scale)
        svg += legend(y: 78)
        svg += yAxis(scale)
        svg += xAxis(scale)
        svg += linearScaling(scale)
        svg += recommendationMark(scale)
        svg += runRanges(scale)
        svg += medianSeries(scale)
        svg.append("</svg>")
        return svg.map { $0 + "\n" }.joined()
    }

    /// Where data lands on the canvas: log₂ connections across, throughput up in round ticks of `unit`.
    private struct Scale {
        /// The plot area.
        let plot: (left: Double, right: Double, top: Double, bottom: Double)
        /// The binary unit of the throughput axis, `MiB` for instance.
        let unit: String
        /// Bytes per second in one `unit` per second.
        let divisor: Double
        /// The throughput axis' ticks, in `unit` per second, from 0.
        let ticks: [Double]
        /// The log₂ of the connection count at the left edge of the plot area.
        let low: Double
        /// The log₂ of the connection count at the right edge of the plot area.
        let high: Double

        /// The x coordinate of a connection count.
        func x(_ connections: Double) -> Double {
            plot.left + (log2(connections) - low) / (high - low) * (plot.right - plot.left)
        }

        /// The y coordinate of a throughput.
        func y(_ bytesPerSecond: Double) -> Double {
            plot.bottom - bytesPerSecond / divisor / (ticks.last ?? 1) * (plot.bottom - plot.top)
        }
    }

    /// The scale of this report's chart: the unit of its fastest run, headroom above it, its counts across.
    private func scale() -> Scale {
        let peak = report.results.map(\.maxBytesPerSecond).max() ?? 0
        let divisor = peak > 0 ? peak / Formatting.scaled(peak).value : 1
        let (low, high) = xDomain(report.results.map(\.connections))
        // Headroom above the highest bar keeps its value label clear of the recommendation label at the top.
        return Scale(
            plot: plot,
            unit: Formatting.scaled(peak).unit,
            divisor: divisor,
            ticks: Axis.ticks(upTo: peak / divisor * 1.2),
            low: low,
            high: high
        )
    }

    /// The XML declaration, the opening `svg` tag, the accessible title and description, the clip path, the
    /// background, and the visible title and subtitle.
    private func header(_ scale: Scale) -> [String] {
        let plot = scale.plot
        let title = "Throughput by connection count"
        return [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(width))\" height=\"\(n(height))\" "
                + "viewBox=\"0 0 \(n(width)) \(n(height))\" role=\"img\" aria-labelledby=\"title desc\" "
                + "font-family=\"system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif\" "
                + "font-size=\"13\" fill=\"\(Self.textColour)\">",
            "<title id=\"title\">\(escape("braid bench: \(title.lowercased()), \(report.url)"))</title>",
            "<desc id=\"desc\">\(escape(description(unit: scale.unit, divisor: scale.divisor)))</desc>",
            "<defs><clipPath id=\"plot-area\"><rect x=\"\(n(plot.left))\" y=\"\(n(plot.top))\" "
                + "width=\"\(n(plot.right - plot.left))\" height=\"\(n(plot.bottom - plot.top))\"/></clipPath></defs>",
            "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>",
            "<text x=\"\(n(plot.left))\" y=\"32\" font-size=\"18\" font-weight=\"600\">\(escape(title))</text>",
            "<text x=\"\(n(plot.left))\" y=\"54\" font-size=\"12\" fill=\"\(Self.mutedColour)\">"
                + "\(escape(subtitle()))</text>",
        ]
    }

    /// The throughput axis: a grid line and a label per tick, and the axis title.
    private func yAxis(_ scale: Scale) -> [String] {
        let plot = scale.plot
        var svg = ["<g class=\"y-axis\" font-size=\"12\" fill=\"\(Self.mutedColour)\" text-anchor=\"end\">"]
        for tick in scale.ticks {
            let position = scale.y(tick * scale.divisor)
            svg.append(
                "<line x1=\"\(n(plot.left))\" y1=\"\(n(position))\" x2=\"\(n(plot.right))\" y2=\"\(n(position))\" "
                    + "stroke=\"\(Self.gridColour)\"/>")
            svg.append(
                "<text x=\"\(n(plot.left - 8))\" y=\"\(n(position + 4))\">\(escape(Axis.label(tick)))</text>")
        }
        svg.append("</g>")
        svg.append(
            "<text class=\"axis-title\" transform=\"translate(24 \(n((plot.top + plot.bottom) / 2))) rotate(-90)\" "
                + "text-anchor=\"middle\">throughput (\(scale.unit)/s)</text>")
        return svg
    }

    /// The connections axis: a tick, the count and its speed-up per result, the axis title, and the frame.
    private func xAxis(_ scale: Scale) -> [String] {
        let plot = scale.plot
        var svg = ["<g class=\"x-axis\" font-size=\"12\" text-anchor=\"middle\">"]
        for result in report.results {
            let position = scale.x(Double(result.connections))
            svg.append(
                "<line x1=\"\(n(position))\" y1=\"\(n(plot.bottom))\" x2=\"\(n(position))\" "
                    + "y2=\"\(n(plot.bottom + 5))\" stroke=\"\(Self.mutedColour)\"/>")
            svg.append("<text x=\"\(n(position))\" y=\"\(n(plot.bottom + 20))\">\(result.connections)</text>")
            svg.append(
                "<text x=\"\(n(position))\" y=\"\(n(plot.bottom + 36))\" fill=\"\(Self.mutedColour)\" "
                    + "font-size=\"11\">\(escape(BenchFormat.speedUp(result.speedUp)))</text>")
        }
        svg.append("</g>")
        svg.append(
            "<text class=\"axis-title\" x=\"\(n((plot.left + plot.right) / 2))\" y=\"\(n(height - 16))\" "
                + "text-anchor=\"middle\">connections (log₂ scale); speed-up over "
                + "\(escape(BenchFormat.connections(report.baselineConnections ?? 1)))</text>")
        svg.append(
            "<path d=\"M\(n(plot.left)) \(n(plot.top))V\(n(plot.bottom))H\(n(plot.right))\" fill=\"none\" "
                + "stroke=\"\(Self.mutedColour)\"/>")
        return svg
    }

    /// The dashed line of linear scaling from the baseline, when there is a baseline and more than one count.
    private func linearScaling(_ scale: Scale) -> [String] {
        let counts = report.results.map(\.connections)
        guard let baseline = report.results.first, baseline.medianBytesPerSecond > 0, counts.count > 1 else {
            return []
        }
        // Drawn through the measured counts only, with straight segments like the median's, so the two lines
        // part exactly where scaling stops being linear.
        let points = counts.map { count -> String in
            let ideal = baseline.medianBytesPerSecond * Double(count) / Double(baseline.connections)
            return "\(n(scale.x(Double(count)))),\(n(scale.y(ideal)))"
        }
        return [
            "<polyline class=\"linear-scaling\" clip-path=\"url(#plot-area)\" "
                + "points=\"\(points.joined(separator: " "))\" fill=\"none\" stroke=\"\(Self.referenceColour)\" "
                + "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>"
        ]
    }

    /// The vertical line and label at the recommended count, when there is one.
    private func recommendationMark(_ scale: Scale) -> [String] {
        guard let recommended = report.recommendedConnections else { return [] }
        let plot = scale.plot
        let position = scale.x(Double(recommended))
        let anchor = position > plot.right - 60 ? "end" : position < plot.left + 60 ? "start" : "middle"
        let shift = anchor == "end" ? -6.0 : anchor == "start" ? 6.0 : 0
        return [
            "<g class=\"recommendation\" data-connections=\"\(recommended)\">",
            "<line x1=\"\(n(position))\" y1=\"\(n(plot.top))\" x2=\"\(n(position))\" y2=\"\(n(plot.bottom))\" "
                + "stroke=\"\(Self.recommendedColour)\" stroke-width=\"1.5\" stroke-dasharray=\"3 3\"/>",
            "<text x=\"\(n(position + shift))\" y=\"\(n(plot.top + 14))\" text-anchor=\"\(anchor)\" "
                + "fill=\"\(Self.recommendedColour)\" font-weight=\"600\" stroke=\"#ffffff\" stroke-width=\"4\" "
                + "paint-order=\"stroke\">recommended: \(recommended)</text>",
            "</g>",
        ]
    }

    /// A min–max bar per count, over its runs.
    private func runRanges(_ scale: Scale) -> [String] {
        var svg = ["<g class=\"runs-range\" stroke=\"\(Self.barColour)\" stroke-width=\"1.5\">"]
        for result in report.results {
            let position = scale.x(Double(result.connections))
            let top = scale.y(result.maxBytesPerSecond)
            let bottom = scale.y(result.minBytesPerSecond)
            svg.append(
                "<path d=\"M\(n(position)) \(n(top))V\(n(bottom))M\(n(position - 6)) \(n(top))H\(n(position + 6))"
                    + "M\(n(position - 6)) \(n(bottom))H\(n(position + 6))\" fill=\"none\"/>")
        }
        svg.append("</g>")
        return svg
    }

    /// The line through the medians, then each median's point and value label.
    private func medianSeries(_ scale: Scale) -> [String] {
        let line = report.results.map {
            "\(n(scale.x(Double($0.connections)))),\(n(scale.y($0.medianBytesPerSecond)))"
        }
        var svg = [
            "<polyline class=\"median\" points=\"\(line.joined(separator: " "))\" fill=\"none\" "
                + "stroke=\"\(Self.medianColour)\" stroke-width=\"2.5\" stroke-linejoin=\"round\"/>",
            "<g class=\"median-points\">",
        ]
        for result in report.results {
            svg += medianPoint(result, scale)
        }
        svg.append("</g>")
        return svg
    }

    /// The point of `result`'s median, ringed when it is the recommended count, with its statistics as a tooltip
    /// and in `data-` attributes, and its value above the bar.
    private func medianPoint(_ result: BenchResult, _ scale: Scale) -> [String] {
        let position = scale.x(Double(result.connections))
        let value = scale.y(result.medianBytesPerSecond)
        let isRecommended = result.connections == report.recommendedConnections
        var svg: [String] = []
        if isRecommended {
            svg.append(
                "<circle cx=\"\(n(position))\" cy=\"\(n(value))\" r=\"9\" fill=\"none\" "
                    + "stroke=\"\(Self.recommendedColour)\" stroke-width=\"2.5\"/>")
        }
        svg.append(
            "<circle class=\"point\" cx=\"\(n(position))\" cy=\"\(n(value))\" r=\"4.5\" "
                + "fill=\"\(isRecommended ? Self.recommendedColour : Self.medianColour)\" stroke=\"#ffffff\" "
                + "stroke-width=\"1.5\" data-connections=\"\(result.connections)\" "
                + "data-median=\"\(n(result.medianBytesPerSecond))\" data-min=\"\(n(result.minBytesPerSecond))\" "
                + "data-max=\"\(n(result.maxBytesPerSecond))\"><title>"
                + escape(
                    "\(BenchFormat.connections(result.connections)): median "
                        + "\(BenchFormat.rate(result.medianBytesPerSecond)) (min "
                        + "\(BenchFormat.rate(result.minBytesPerSecond)), max "
                        + "\(BenchFormat.rate(result.maxBytesPerSecond)), \(result.runs.count) runs), "
                        + "\(BenchFormat.speedUp(result.speedUp))")
                + "</title></circle>")
        svg.append(
            "<text x=\"\(n(position))\" y=\"\(n(scale.y(result.maxBytesPerSecond) - 13))\" text-anchor=\"middle\" "
                + "font-size=\"11\" fill=\"\(Self.textColour)\" stroke=\"#ffffff\" stroke-width=\"3\" "
                + "paint-order=\"stroke\">"
                + "\(escape(Axis.label(rounded(result.medianBytesPerSecond / scale.divisor))))</text>")
        return svg
    }

    /// The log₂ range the x axis spans: half an octave beyond the smallest and largest counts.
    private func xDomain(_ counts: [Int]) -> (low: Double, high: Double) {
        guard let first = counts.first, let last = counts.last, last > first else {
            let centre = log2(Double(counts.first ?? 1))
            return (centre - 1, centre + 1)
        }
        return (log2(Double(first)) - 0.5, log2(Double(last)) + 0.5)
    }

    private func legend(y: Double) -> [String] {
        let left = plot.left
        var items: [String] = ["<g class=\"legend\" font-size=\"12\">"]
        items.append(
            "<line x1=\"\(n(left))\" y1=\"\(n(y - 4))\" x2=\"\(n(left + 22))\" y2=\"\(n(y - 4))\" "
                + "stroke=\"\(Self.medianColour)\" stroke-width=\"2.5\"/>"
                + "<circle cx=\"\(n(left + 11))\" cy=\"\(n(y - 4))\" r=\"4\" fill=\"\(Self.medianColour)\"/>"
                + "<text x=\"\(n(left + 28))\" y=\"\(n(y))\">median</text>")
        let barX = left + 96
        items.append(
            "<path d=\"M\(n(barX)) \(n(y - 11))V\(n(y + 3))M\(n(barX - 5)) \(n(y - 11))H\(n(barX + 5))"
                + "M\(n(barX - 5)) \(n(y + 3))H\(n(barX + 5))\" stroke=\"\(Self.barColour)\" stroke-width=\"1.5\" "
                + "fill=\"none\"/><text x=\"\(n(barX + 11))\" y=\"\(n(y))\">min–max of the runs</text>")
        let referenceX = left + 246
        items.append(
            "<line x1=\"\(n(referenceX))\" y1=\"\(n(y - 4))\" x2=\"\(n(referenceX + 26))\" y2=\"\(n(y - 4))\" "
                + "stroke=\"\(Self.referenceColour)\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>"
                + "<text x=\"\(n(referenceX + 32))\" y=\"\(n(y))\">linear scaling</text>")
        let recommendedX = left + 368
        items.append(
            "<circle cx=\"\(n(recommendedX + 8))\" cy=\"\(n(y - 4))\" r=\"7\" fill=\"none\" "
                + "stroke=\"\(Self.recommendedColour)\" stroke-width=\"2\"/>"
                + "<text x=\"\(n(recommendedX + 22))\" y=\"\(n(y))\">recommended</text>")
        items.append("</g>")
        return items
    }

    /// What was measured, in one line under the title.
    private func subtitle() -> String {
        var url = report.url
        if url.count > 72 { url = String(url.prefix(71)) + "…" }
        let size = report.byteLimit.map { BenchFormat.bytes($0) + " per run" } ?? "whole file per run"
        let runs = report.repeats == 1 ? "1 run per count" : "\(report.repeats) runs per count"
        return "\(url) · \(size) · \(runs)"
    }

    /// The chart's data in words, for screen readers and for anyone reading the SVG source.
    private func description(unit: String, divisor: Double) -> String {
        var text = report.results.map { result in
            "\(BenchFormat.connections(result.connections)): median "
                + "\(Axis.label(rounded(result.medianBytesPerSecond / divisor))) \(unit)/s"
        }.joined(separator: "; ")
        if let recommendation = report.recommendation { text += ". Recommended: " + recommendation.reason }
        return text
    }

    /// A value rounded to three significant digits, for labels.
    private func rounded(_ value: Double) -> Double {
        guard value > 0 else { return 0 }
        let scale = pow(10, 2 - log10(value).rounded(.down))
        return (value * scale).rounded() / scale
    }

    /// A coordinate with at most one decimal.
    private func n(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return Formatting.fixed(rounded, digits: rounded == rounded.rounded() ? 0 : 1)
    }

    /// `text` with the five XML special characters escaped.
    private func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
