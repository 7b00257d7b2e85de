import Braid

/// What one benchmark measures and how: the URL, the schedule of connection counts, how much of the resource each
/// run fetches and where it goes, and the request settings every run shares.
public struct BenchConfiguration: Sendable {
    /// The http or https URL measured.
    public let url: String
    /// The connection counts and the order of the runs.
    public let schedule: BenchSchedule
    /// The bytes each run fetches at most, or `nil` for the whole resource.
    public let byteLimit: Int64?
    /// What `braid bench` fetches per run unless told otherwise: 64 MiB, so that the default schedule (15 runs,
    /// about 1 GiB) takes about a minute at 16 MiB/s, however large the resource, while each of 16 connections
    /// still gets a range of 4 MiB.
    public static let defaultByteLimit: Int64 = 64 << 20
    /// Whether runs receive the bytes but write nothing, measuring the network path alone.
    public let discardsData: Bool
    /// How requests are made (headers, TLS trust, redirects, retries, timeouts). The runner sets the connections,
    /// the destination, the byte limit and what is kept of each run itself.
    public var requestOptions: DownloadOptions
    /// The directory the temporary directory of the runs is made in; `nil` for `$TMPDIR`, or `/tmp` without it.
    public var temporaryParent: String?

    /// A benchmark of `url` measuring each of `connectionCounts` `repeats` times, each run fetching the first
    /// `byteLimit` bytes (the whole resource when `nil`), discarding them when `discardsData` is true.
    ///
    /// Throws a usage error when ``BenchSchedule`` refuses the counts or repeats, or for a `byteLimit` below 1.
    public init(
        url: String,
        connectionCounts: [Int],
        repeats: Int,
        byteLimit: Int64?,
        discardsData: Bool,
        requestOptions: DownloadOptions = DownloadOptions(),
        temporaryParent: String? = nil
    ) throws(BraidError) {
        schedule = try BenchSchedule(connectionCounts: connectionCounts, repeats: repeats)
        if let byteLimit, byteLimit < 1 {
            throw BraidError(.usage, "the byte limit must be at least 1, got \(byteLimit)", option: .byteLimit)
        }
        self.url = url
        self.byteLimit = byteLimit
        self.discardsData = discardsData
        self.requestOptions = requestOptions
        self.temporaryParent = temporaryParent
    }
}
