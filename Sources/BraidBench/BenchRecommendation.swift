/// The connection count `braid bench` recommends: the smallest whose median throughput is within a tolerance
/// (5 %) of the best median, because connections beyond it cost the server more for a gain within the noise.
public struct BenchRecommendation: Sendable, Equatable, Codable {
    /// The recommended connection count.
    public var connections: Int
    /// Its median throughput.
    public var medianBytesPerSecond: Double
    /// The count with the best median throughput (the smallest of them on a tie).
    public var bestConnections: Int
    /// The best median throughput.
    public var bestMedianBytesPerSecond: Double
    /// How far below the best a median may be and still count as as good, as a fraction (0.05 is 5 %).
    public var tolerance: Double
    /// One or two sentences saying why, for the terminal and the JSON document.
    public var reason: String

    /// The tolerance the command uses: within 5 % of the best.
    public static let defaultTolerance = 0.05

    /// The recommendation for `results`, or `nil` when there are none.
    public init?(results: [BenchResult], tolerance: Double = defaultTolerance) {
        let ordered = results.sorted { $0.connections < $1.connections }
        guard let best = ordered.max(by: { $0.medianBytesPerSecond < $1.medianBytesPerSecond }) else { return nil }
        let bestMedian = best.medianBytesPerSecond
        let bestResult = ordered.first { $0.medianBytesPerSecond == bestMedian } ?? best
        let threshold = bestMedian * (1 - tolerance)
        let chosen = ordered.first { $0.medianBytesPerSecond >= threshold } ?? bestResult
        connections = chosen.connections
        medianBytesPerSecond = chosen.medianBytesPerSecond
        bestConnections = bestResult.connections
        bestMedianBytesPerSecond = bestMedian
        self.tolerance = tolerance
        reason = Self.reason(
            chosen: chosen,
            best: bestResult,
            tolerance: tolerance,
            largestMeasured: ordered.last?.connections ?? chosen.connections,
            countsMeasured: ordered.count
        )
    }

    private static func reason(
        chosen: BenchResult,
        best: BenchResult,
        tolerance: Double,
        largestMeasured: Int,
        countsMeasured: Int
    ) -> String {
        let percent = BenchFormat.percent(tolerance)
        let name = BenchFormat.connections(chosen.connections)
        guard countsMeasured > 1 else {
            return "\(name) is the only count measured (\(BenchFormat.rate(chosen.medianBytesPerSecond)) median)."
        }
        var text: String
        if chosen.connections == best.connections {
            text =
                "\(name) gave the best median throughput (\(BenchFormat.rate(best.medianBytesPerSecond))) and no "
                + "smaller count came within \(percent) of it."
            if chosen.connections == largestMeasured {
                text += " It is the largest count measured: more connections may be faster still."
            }
        } else {
            text =
                "\(name) is the smallest count whose median throughput "
                + "(\(BenchFormat.rate(chosen.medianBytesPerSecond))) is within \(percent) of the best "
                + "(\(BenchFormat.rate(best.medianBytesPerSecond)) with \(BenchFormat.connections(best.connections))); "
                + "more connections load the server for a gain within the noise."
        }
        return text
    }
}
