/// The runs of one connection count and what they add up to.
public struct BenchResult: Sendable, Equatable, Codable {
    /// The connection count.
    public var connections: Int
    /// Its runs, in the order they were performed.
    public var runs: [BenchRun]
    /// The median throughput of the runs (the mean of the middle two for an even number of runs).
    public var medianBytesPerSecond: Double
    /// The slowest run's throughput.
    public var minBytesPerSecond: Double
    /// The fastest run's throughput.
    public var maxBytesPerSecond: Double
    /// The median throughput divided by the baseline's (the smallest count measured, normally 1).
    public var speedUp: Double
    /// The median time to first byte, over the runs that received one.
    public var medianTimeToFirstByte: Double?
    /// The median CPU time of a run.
    public var medianCPUSeconds: Double
    /// Retries over all the runs.
    public var retries: Int

    /// The statistics of `runs`, all of `connections` connections, with the speed-up over a baseline median
    /// throughput of `baselineBytesPerSecond`.
    ///
    /// `runs` must not be empty.
    public init(connections: Int, runs: [BenchRun], baselineBytesPerSecond: Double) {
        precondition(!runs.isEmpty, "a result needs at least one run")
        self.connections = connections
        self.runs = runs
        let throughputs = runs.map(\.bytesPerSecond)
        medianBytesPerSecond = Self.median(throughputs)
        minBytesPerSecond = throughputs.min() ?? 0
        maxBytesPerSecond = throughputs.max() ?? 0
        speedUp = baselineBytesPerSecond > 0 ? medianBytesPerSecond / baselineBytesPerSecond : 0
        let firstBytes = runs.compactMap(\.timeToFirstByte)
        medianTimeToFirstByte = firstBytes.isEmpty ? nil : Self.median(firstBytes)
        medianCPUSeconds = Self.median(runs.map(\.cpuSeconds))
        retries = runs.reduce(0) { $0 + $1.retries }
    }

    /// The median of `values`: the middle one, or the mean of the middle two; 0 for none.
    public static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
