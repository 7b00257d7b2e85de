extension DownloadManager {
    /// How many of a manager's downloads run at once.
    public enum Concurrency: Sendable, Equatable, ExpressibleByIntegerLiteral {
        /// At most this many (at least 1), started in the order they were submitted.
        case fixed(Int)
        /// The next download starts whenever the connection caps leave room for one more connection to its host:
        /// a list of small files runs about `maximumConnectionsPerHost` at a time from one host, one of large
        /// files fewer (each counts as the connections it plans), and never more than `automaticCeiling` at once.
        /// A download not probed yet counts as what the earlier ones from its host turned out to need.
        case automatic

        /// The most downloads `automatic` runs at once, whatever the caps: each running download is a thread.
        public static let automaticCeiling = 64

        public init(integerLiteral value: Int) {
            self = .fixed(value)
        }
    }
}
