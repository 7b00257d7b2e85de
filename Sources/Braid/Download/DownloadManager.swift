import SystemPackage

/// Runs many downloads under shared limits: how many at once, how many connections in all, and how many to any
/// one host. A failing download does not stop the others.
///
/// ```swift
/// let manager = DownloadManager(limits: .init(concurrentDownloads: 3, maximumConnectionsPerHost: 8))
/// let downloads = urls.map { manager.makeDownload(url: $0, options: options) }
/// let outcomes = await manager.run(downloads)
/// ```
public final class DownloadManager: Sendable {
    /// The limits every download of the manager shares.
    public struct Limits: Sendable, Equatable {
        /// Downloads running at once; the rest wait in the `queued` state.
        public var concurrentDownloads: Int
        /// Connections across all running downloads.
        public var maximumConnections: Int
        /// Connections to any one host across all running downloads.
        public var maximumConnectionsPerHost: Int
        /// Bytes a second across all running downloads, on top of each download's own `rateLimit`; nil for none.
        public var overallRateLimit: Int64?

        public init(
            concurrentDownloads: Int = 3,
            maximumConnections: Int = 48,
            maximumConnectionsPerHost: Int = 16,
            overallRateLimit: Int64? = nil
        ) {
            self.concurrentDownloads = concurrentDownloads
            self.maximumConnections = maximumConnections
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.overallRateLimit = overallRateLimit
        }
    }

    /// The limits as they are now (`overallRateLimit` may have changed since the manager was made).
    public var limits: Limits {
        var limits = initialLimits
        limits.overallRateLimit = overallRateLimit
        return limits
    }

    /// Bytes a second across all the manager's running downloads; nil for no limit. It can be changed at any time,
    /// also while downloads run: the new rate holds from the next chunk on.
    public var overallRateLimit: Int64? {
        get { limiter.rate }
        set { limiter.rate = newValue }
    }

    private let initialLimits: Limits
    private let budget: ConnectionBudget
    private let limiter: RateLimiter
    private let claims = DestinationClaims()
    /// One multi handle and thread for every download of the manager: connections, TLS sessions and DNS answers
    /// are reused from one download to the next, within the connection caps.
    private let pool: TransferPool

    public init(limits: Limits = Limits()) {
        initialLimits = limits
        limiter = RateLimiter(rate: limits.overallRateLimit)
        budget = ConnectionBudget(
            maximumConnections: limits.maximumConnections,
            maximumPerHost: limits.maximumConnectionsPerHost
        )
        pool = TransferPool(
            limits: TransferPool.Limits(
                maximumConnectionsPerHost: limits.maximumConnectionsPerHost,
                maximumConnections: limits.maximumConnections))
    }

    /// Keeps `path` from every download of the manager: none may have it as its final path, nor write its partial
    /// file or manifest there. For the files a program keeps beside its downloads, such as a daemon's session file,
    /// which a name chosen by a server or a client must never replace. Compared by path, after `..` and `.` are
    /// resolved lexically: give it as the downloads' paths will be spelled (absolute, through the same links).
    ///
    /// - Parameter owner: what keeps the file, for the message of a download refused its name.
    public func reserve(_ path: String, for owner: String) {
        claims.reserve(FilePath(path), for: owner)
    }

    /// What keeps a file a download to `final` would write (see `reserve(_:for:)`); nil when nothing does.
    public func reservation(ofDestination final: String) -> String? {
        claims.reservation(of: FilePath(final))
    }

    /// A download whose connections count against this manager's limits, and whose final path no other download
    /// of the manager may take while it runs.
    ///
    /// - Parameter label: how the error of another download that wants the same final path names this one
    ///   (a list says "line 3"); the URL when nil. It also prefixes this download's own such error.
    public func makeDownload(url: String, options: DownloadOptions, label: String? = nil) -> Download {
        Download(
            url: url, options: options, budget: budget, overallLimiter: limiter, claims: claims, label: label,
            pool: pool)
    }

    /// Runs `downloads`, at most `limits.concurrentDownloads` at a time, in order, and returns each one's outcome
    /// in the same order. Cancelling the calling task cancels every download, running or queued (each then has a
    /// `.cancelled` outcome, its progress kept).
    public func run(_ downloads: [Download]) async -> [Result<DownloadResult, BraidError>] {
        var outcomes = [Result<DownloadResult, BraidError>?](repeating: nil, count: downloads.count)
        await withTaskGroup(of: (Int, Result<DownloadResult, BraidError>).self) { group in
            var next = 0
            func startNext() {
                guard next < downloads.count else { return }
                let index = next
                let download = downloads[index]
                next += 1
                group.addTask {
                    do throws(BraidError) {
                        return (index, .success(try await download.run()))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            for _ in 0..<max(1, limits.concurrentDownloads) { startNext() }
            while let (index, outcome) = await group.next() {
                outcomes[index] = outcome
                startNext()
            }
        }
        return outcomes.map { $0! }
    }

    /// Connections in use now across the manager's downloads.
    public var connectionsInUse: Int { budget.inUse }
}
