/// Everything one `braid bench` measured and concluded: its runs grouped by connection count, their statistics
/// and the recommended count. It renders itself as a table, JSON, CSV and an SVG chart.
public struct BenchReport: Sendable, Equatable, Codable {
    /// The URL measured.
    public var url: String
    /// The bytes each run fetched at most (`--bytes`), or `nil` when each run fetched the whole resource (with no
    /// limit, or one no smaller than the resource).
    public var byteLimit: Int64?
    /// Whether the runs discarded the data instead of writing it to a temporary file.
    public var discardsData: Bool
    /// How many times each count was scheduled.
    public var repeats: Int
    /// The counts scheduled, ascending.
    public var connectionCounts: [Int]
    /// The count the speed-ups are relative to: the smallest measured, normally 1.
    public var baselineConnections: Int?
    /// One result per connection count that has runs, ascending.
    public var results: [BenchResult]
    /// The recommended count, repeated from ``recommendation`` for readers of the JSON document.
    public var recommendedConnections: Int?
    /// The recommendation and its reason; `nil` when nothing was measured.
    public var recommendation: BenchRecommendation?

    /// Groups `runs` by connection count and works out the statistics and the recommendation.
    ///
    /// Runs may cover only part of `schedule` (an interrupted benchmark); counts without runs are left out.
    public init(
        url: String,
        byteLimit: Int64?,
        discardsData: Bool,
        schedule: BenchSchedule,
        runs: [BenchRun],
        tolerance: Double = BenchRecommendation.defaultTolerance
    ) {
        self.url = url
        self.byteLimit = byteLimit
        self.discardsData = discardsData
        repeats = schedule.repeats
        connectionCounts = schedule.connectionCounts
        let grouped = Dictionary(grouping: runs.sorted { $0.sequence < $1.sequence }, by: \.connections)
        let measured = grouped.keys.sorted()
        baselineConnections = measured.first
        let baseline = measured.first.map { BenchResult.median(grouped[$0, default: []].map(\.bytesPerSecond)) } ?? 0
        results = measured.map { count in
            BenchResult(connections: count, runs: grouped[count, default: []], baselineBytesPerSecond: baseline)
        }
        recommendation = BenchRecommendation(results: results, tolerance: tolerance)
        recommendedConnections = recommendation?.connections
    }

    /// Every run, in the order performed.
    public var runs: [BenchRun] {
        results.flatMap(\.runs).sorted { $0.sequence < $1.sequence }
    }
}
