import Logging
import Synchronization
import SystemPackage

/// Runs many downloads under shared limits: how many at once, how many connections in all, and how many to any
/// one host. A failing download does not stop the others.
///
/// ```swift
/// let manager = DownloadManager()
/// let events = manager.events
/// manager.submit(urls.map { manager.makeDownload(url: $0, options: options) })
/// manager.finish()
/// for await event in events {
///     if case let .finished(download, outcome) = event { print(download.url, outcome) }
/// }
/// ```
///
/// Downloads wait in line and start as the limits allow (`Concurrency`); while some run, more can be submitted,
/// any can be paused, resumed or cancelled, and `concurrentDownloads` changed. `events` tells what each one does as
/// it happens; `run(_:)` instead submits some and returns their outcomes once all have ended. Design:
/// docs/design/many-downloads.md.
public final class DownloadManager: Sendable {
    /// The limits every download of the manager shares.
    public struct Limits: Sendable, Equatable {
        /// Downloads running at once; the rest wait in the `queued` state.
        public var concurrentDownloads: Concurrency
        /// Connections across all running downloads.
        public var maximumConnections: Int
        /// Connections to any one host across all running downloads.
        public var maximumConnectionsPerHost: Int
        /// Bytes a second across all running downloads, on top of each download's own `rateLimit`; nil for none.
        public var overallRateLimit: Int64?

        public init(
            concurrentDownloads: Concurrency = .automatic,
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

    /// The limits as they are now (`concurrentDownloads` and `overallRateLimit` may have changed since the manager
    /// was made).
    public var limits: Limits {
        var limits = initialLimits
        limits.concurrentDownloads = concurrentDownloads
        limits.overallRateLimit = overallRateLimit
        return limits
    }

    /// Bytes a second across all the manager's running downloads; nil for no limit. It can be changed at any time,
    /// also while downloads run: the new rate holds from the next chunk on.
    public var overallRateLimit: Int64? {
        get { limiter.rate }
        set { limiter.rate = newValue }
    }

    /// How many downloads run at once. It can be changed at any time: more start at once when it grows, and when it
    /// shrinks none is stopped, but none starts until fewer run.
    public var concurrentDownloads: Concurrency {
        get { state.withLock { $0.queue.concurrency } }
        set {
            change { state in
                automatic.store(newValue == .automatic, ordering: .relaxed)
                return state.queue.setConcurrency(newValue)
            }
        }
    }

    /// Whether `concurrentDownloads` is `.automatic`, read without the lock: only then does the queue want to hear
    /// of a download's start (the connections it plans), and a list's ten thousand downloads each take the lock
    /// one time fewer otherwise.
    let automatic: Atomic<Bool>

    struct State {
        var queue: DownloadQueue<ObjectIdentifier>
        /// The downloads in the queue, and the logger each was submitted under.
        var downloads: [ObjectIdentifier: (download: Download, logger: Logger)] = [:]
        /// Who waits for a download's outcome besides the stream (`run(_:)`).
        var waiters: [ObjectIdentifier: [@Sendable (Result<DownloadResult, BraidError>) -> Void]] = [:]
        /// The stream's buffer, once `events` was read.
        var stream: (buffer: EventQueue<Event>, events: AsyncStream<Event>)?
        /// Whether `finish()` was called.
        var finishing = false
        /// Outcomes to hand to their waiters once the lock is released.
        var ended: [([@Sendable (Result<DownloadResult, BraidError>) -> Void], Result<DownloadResult, BraidError>)] =
            []
        /// The direct files in the queue (`DirectFile`), and the logger each was submitted under.
        var files: [ObjectIdentifier: (file: DirectFile, logger: Logger)] = [:]
        /// Direct files that ended in the queue, never started, to tell once the lock is released.
        var filesEnded: [(DirectFile, DirectFile.Report)] = []
        /// The direct files whose downloads (`downloads`) took their place in the queue under their id, held until
        /// those end: the id is the file object's, which a file made meanwhile would be given once the object went,
        /// and the queue would then take the new file for the download and never start it.
        var handedOver: [ObjectIdentifier: DirectFile] = [:]
        /// Direct files out of the queue that wait for their name (`NamingQueue`), their end not yet told; below
        /// zero for a moment where one's end came before its leaving the queue was counted.
        var naming = 0

        /// Whether the stream has carried all it will: `finish()` was called, and every download and direct file
        /// submitted has ended and been told.
        var streamEnds: Bool { finishing && queue.isEmpty && filesEnded.isEmpty && naming == 0 }
    }

    private let initialLimits: Limits
    /// Whether `events` carries the downloads' `.state` and `.completed` events (`DownloadEvent.isStateOrResult`).
    let streamsStates: Bool
    let limiter: RateLimiter
    private let claims = DestinationClaims()
    private let directories = OpenDirectories()
    private let checksumFiles = ChecksumFiles()
    private let naming = NamingQueue()
    /// What a direct file uses of the manager's, as its downloads do.
    var directShared: DirectRequest.Shared {
        DirectRequest.Shared(claims: claims, directories: directories, checksumFiles: checksumFiles, naming: naming)
    }
    /// The multi handles and threads the manager's downloads run on (two where two cores can receive, `PoolLanes`):
    /// connections, TLS sessions and DNS answers are reused from one download to the next, within the connection
    /// caps.
    let lanes: PoolLanes
    let state: ThreadLock<State>
    /// The stream's buffer once `events` was read (set once, under `state`'s lock): a download's event that tells
    /// the queue nothing goes into it without taking that lock.
    let streamBuffer = AtomicLazyReference<EventQueue<Event>>()

    public convenience init(limits: Limits = Limits()) {
        self.init(limits: limits, streamingStates: true)
    }

    /// A manager whose `events` leave out, with `streamingStates` false, every download's `.state` and `.completed`
    /// events: for a program that reads only each download's start, progress, notices, retries and outcome
    /// (`.finished` carries the result `.completed` does), such as the command line's list, where each small file
    /// of a list of thousands then pushes and reads four events fewer. The downloads' own `events` keep them all.
    package init(limits: Limits, streamingStates: Bool) {
        initialLimits = limits
        streamsStates = streamingStates
        automatic = Atomic(limits.concurrentDownloads == .automatic)
        limiter = RateLimiter(rate: limits.overallRateLimit)
        lanes = PoolLanes(
            maximumConnections: limits.maximumConnections, maximumPerHost: limits.maximumConnectionsPerHost,
            logger: Logger.current)
        state = ThreadLock(
            State(
                queue: DownloadQueue(
                    concurrency: limits.concurrentDownloads,
                    caps: .init(connections: limits.maximumConnections, perHost: limits.maximumConnectionsPerHost)
                )
            )
        )
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
    /// of the manager may take while it runs. Submit it (`submit(_:paused:)`, `run(_:)`), or run it on its own.
    ///
    /// - Parameter label: how the error of another download that wants the same final path names this one
    ///   (a list says "line 3"); the URL when nil. It also prefixes this download's own such error.
    public func makeDownload(url: String, options: DownloadOptions, label: String? = nil) -> Download {
        makeDownload(url: url, options: options, label: label, keepingOwnEvents: true)
    }

    /// `makeDownload(url:options:label:)`, for a program that reads the manager's `events` only: without
    /// `keepingOwnEvents`, the download's own `events` end empty, and a list of ten thousand files keeps no second
    /// copy of every event in memory, nobody reading it.
    package func makeDownload(
        url: String, options: DownloadOptions, label: String? = nil, keepingOwnEvents: Bool
    ) -> Download {
        Download(
            url: url, options: options, lanes: lanes, overallLimiter: limiter, claims: claims,
            directories: directories, checksumFiles: checksumFiles, label: label, keepsOwnEvents: keepingOwnEvents)
    }

    /// Lets other downloads of the manager take the final path `download` claimed, once it is over: for a program
    /// whose downloads come and go at a user's word, such as a daemon, where a failed or removed download's name
    /// must not stay taken for the manager's life. What it left there is then found as files already there are
    /// (`FILE` refused as existing unless replaced, `FILE.part` resumed only by the same file). A list keeps its
    /// claims, so that one entry never takes an earlier entry's finished file for its own.
    public func releaseDestination(of download: Download) {
        claims.release(for: download.url, by: download.claimLabel)
    }

    /// Connections in use now across the manager's downloads.
    public var connectionsInUse: Int { lanes.connectionsInUse }
}
