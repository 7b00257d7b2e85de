/// A snapshot of a running download, delivered about four times a second.
public struct DownloadProgress: Sendable, Equatable {
    /// One segment of the file and how much of it has arrived.
    public struct Segment: Sendable, Equatable {
        public var start: Int64
        public var end: Int64
        public var doneBytes: Int64
        /// Whether a connection is fetching it now.
        public var isActive: Bool
    }

    /// Bytes of the file received so far, including those resumed from an earlier run.
    public var downloadedBytes: Int64
    /// The file's length, when known.
    public var totalBytes: Int64?
    /// Recent throughput.
    public var bytesPerSecond: Double
    public var activeConnections: Int
    /// With automatic connections (`DownloadOptions.automaticConnections`), the number it aims for now; nil for a
    /// fixed count.
    public var targetConnections: Int?
    /// With automatic connections, why the count is what it is ("the last step gained 42%").
    public var connectionsReason: String?
    /// Requests retried so far.
    public var retries: Int
    /// With cache peers (`DownloadOptions.cachePeers`), the bytes they sent in this run; nil without peers.
    public var peerBytes: Int64?
    /// With cache peers, the bytes the origin and its mirrors sent in this run; nil without peers.
    public var originBytes: Int64?
    /// Segments in file order.
    public var segments: [Segment]

    /// The fraction done, 0...1, when the length is known.
    public var fraction: Double? {
        guard let totalBytes else { return nil }
        return totalBytes == 0 ? 1 : Double(downloadedBytes) / Double(totalBytes)
    }

    /// Seconds left at the recent speed, when it can be estimated.
    public var estimatedSecondsRemaining: Double? {
        guard let totalBytes, bytesPerSecond > 0 else { return nil }
        return Double(max(0, totalBytes - downloadedBytes)) / bytesPerSecond
    }
}

extension DownloadProgress {
    /// The progress of a file fetched in one request whose body is read whole (`Prober.readsWhole`): `received`
    /// bytes of `total` in `seconds` since its first byte. No rate before `SpeedMeter.minimumSpan`, as the meter.
    static func oneRequest(received: Int64, of total: Int64, seconds: Double) -> DownloadProgress {
        DownloadProgress(
            downloadedBytes: received, totalBytes: total,
            bytesPerSecond: seconds >= SpeedMeter.minimumSpan ? Double(received) / seconds : 0,
            activeConnections: 1, targetConnections: nil, connectionsReason: nil, retries: 0, peerBytes: nil,
            originBytes: nil,
            segments: [Segment(start: 0, end: total, doneBytes: received, isActive: true)])
    }
}
