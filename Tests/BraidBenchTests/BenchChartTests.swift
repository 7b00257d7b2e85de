import Foundation
import Testing

@testable import Braid
@testable import BraidBench

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The SVG chart is well-formed XML and carries the series it claims to draw.
@Suite("BenchChart")
struct BenchChartTests {
    /// The elements of an XML document, in document order, with their attributes and text.
    final class Elements: NSObject, XMLParserDelegate {
        struct Element {
            var name: String
            var attributes: [String: String]
            var text = ""
        }

        var elements: [Element] = []
        private var open: [Int] = []

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            open.append(elements.count)
            elements.append(Element(name: name, attributes: attributes))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if let index = open.last { elements[index].text += string }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            open.removeLast()
        }

        /// Parses `text`, or returns `nil` if it is not well-formed.
        static func parse(_ text: String) -> Elements? {
            let parser = XMLParser(data: Data(text.utf8))
            let elements = Elements()
            parser.delegate = elements
            return parser.parse() ? elements : nil
        }

        func all(_ name: String, class className: String? = nil) -> [Element] {
            elements.filter { $0.name == name && (className == nil || $0.attributes["class"] == className) }
        }
    }

    static let mib: Double = 1_048_576
    static let medians: [Int: Double] = [
        1: 25 * mib, 2: 50 * mib, 4: 100 * mib, 8: 200 * mib, 16: 390 * mib, 32: 400 * mib,
    ]

    @Test("The chart is well-formed SVG with one median point per count, carrying its statistics")
    func series() throws {
        let report = try BenchTestRuns.report(medians: Self.medians)
        let svg = try #require(Elements.parse(report.svg()), "the SVG is well-formed XML")
        let root = try #require(svg.elements.first)
        #expect(root.name == "svg")
        #expect(root.attributes["xmlns"] == "http://www.w3.org/2000/svg")
        #expect(root.attributes["viewBox"] != nil)

        let points = svg.all("circle", class: "point")
        #expect(points.compactMap { $0.attributes["data-connections"].flatMap(Int.init) } == [1, 2, 4, 8, 16, 32])
        for (point, result) in zip(points, report.results) {
            let median = try #require(point.attributes["data-median"].flatMap(Double.init))
            let minimum = try #require(point.attributes["data-min"].flatMap(Double.init))
            let maximum = try #require(point.attributes["data-max"].flatMap(Double.init))
            #expect(abs(median - result.medianBytesPerSecond) <= 0.05)
            #expect(abs(minimum - result.minBytesPerSecond) <= 0.05)
            #expect(abs(maximum - result.maxBytesPerSecond) <= 0.05)
        }
        let line = try #require(svg.all("polyline", class: "median").first?.attributes["points"])
        #expect(line.split(separator: " ").count == 6)
        #expect(try #require(svg.all("polyline", class: "linear-scaling").first).attributes["points"] != nil)
        let ranges = try #require(svg.all("g", class: "runs-range").first)
        #expect(ranges.name == "g")
        #expect(svg.all("path").count >= 6 + 1, "a min–max bar per count, and the axes")
    }

    @Test("The axes are labelled and the recommendation is marked")
    func labelsAndRecommendation() throws {
        let report = try BenchTestRuns.report(medians: Self.medians)
        let svg = try #require(Elements.parse(report.svg()))
        let titles = svg.all("text", class: "axis-title").map(\.text)
        #expect(titles.contains("throughput (MiB/s)"))
        #expect(titles.contains { $0.hasPrefix("connections") })
        let recommendation = try #require(svg.all("g", class: "recommendation").first)
        #expect(recommendation.attributes["data-connections"] == "16")
        #expect(svg.elements.contains { $0.name == "text" && $0.text == "recommended: 16" })
        #expect(svg.all("title").first?.text.contains(report.url) == true)
        #expect(svg.all("desc").first?.text.contains("Recommended: 16 connections") == true)
    }

    @Test("Text from the URL is escaped, so the document stays well-formed")
    func escaping() throws {
        var report = try BenchTestRuns.report(medians: [1: 100, 2: 200], rounds: 1)
        report.url = "http://127.0.0.1/f?a=1&b=<2>\"'"
        let svg = try #require(Elements.parse(report.svg()))
        #expect(svg.all("title").first?.text == "braid bench: throughput by connection count, \(report.url)")
    }

    @Test("A single count and an empty report still make well-formed charts")
    func degenerate() throws {
        let single = try BenchTestRuns.report(medians: [8: 100 * Self.mib], rounds: 1)
        #expect(Elements.parse(single.svg())?.all("circle", class: "point").count == 1)
        let schedule = try BenchSchedule(connectionCounts: [1], repeats: 1)
        let empty = BenchReport(
            url: "http://127.0.0.1/f", byteLimit: nil, discardsData: false, schedule: schedule, runs: [])
        #expect(Elements.parse(empty.svg())?.all("circle", class: "point").isEmpty == true)
    }

    @Test(
        "Axis ticks are round steps from 0 that reach the maximum",
        arguments: [
            (397.0, [0.0, 100, 200, 300, 400]), (23, [0, 5, 10, 15, 20, 25]), (1, [0, 0.2, 0.4, 0.6, 0.8, 1]),
            (0, [0, 1]),
        ] as [(Double, [Double])]
    )
    func ticks(maximum: Double, expected: [Double]) {
        let ticks = BenchChart.Axis.ticks(upTo: maximum)
        #expect(ticks.count == expected.count)
        for (tick, value) in zip(ticks, expected) { #expect(abs(tick - value) < 1e-9) }
    }

    @Test("For any maximum, the ticks cover it in a handful of equal steps")
    func tickProperties() {
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<500 {
            let maximum = pow(10, Double.random(in: -3...6, using: &generator))
            let ticks = BenchChart.Axis.ticks(upTo: maximum)
            #expect(ticks.first == 0)
            #expect((ticks.last ?? 0) >= maximum * (1 - 1e-9), "\(maximum)")
            #expect((3...11).contains(ticks.count), "\(maximum): \(ticks)")
        }
    }
}
