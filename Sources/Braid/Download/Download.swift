import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A segmented, resumable, verified download of one file.
///
/// ```swift
/// let download = Download(url: "https://example.org/big.iso", options: options)
/// Task { for await event in download.events { print(event) } }
/// let result = try await download.run()
/// ```
///
/// `run()` performs the blocking work on a thread of its own, so it never occupies a Swift concurrency thread.
/// While it runs, `pause()` saves progress and holds the download until `resume()`, without `run()` returning;
/// `cancel(removingPartialFile:)` ends it. Progress is saved as it goes: a new `Download` of the same URL and
/// destination, in this process or another, resumes where an earlier one stopped.
///
/// Braid logs through `Logger.current` as it is when `run()` is called (bind one with swift-log's `withLogger`):
/// notices (restarts, dropped mirrors), retries and state changes at `debug`, every request at `trace`. The same
/// facts arrive as `events`, which are the primary channel; the log adds the per-request detail.
public final class Download: Sendable {
    /// The URL as given.
    public let url: String
    public let options: DownloadOptions
    /// Everything the download reports, in the order it happened; finishes when it ends (`run()` returns, or its
    /// manager ends it before it started). Meant for one
    /// consumer. A slow consumer loses nothing but stale progress: an unread `progress` event is replaced by the
    /// next one, while every other event is kept.
    public let events: AsyncStream<DownloadEvent>

    /// The file's bytes in order while the download runs, when `options.stream` targets `.chunks`: see
    /// `DownloadChunks`. Empty for any other download.
    public var chunks: DownloadChunks { DownloadChunks(channel: chunkChannel) }

    private let chunkChannel = ChunkChannel()
    /// Where `events` reads from; nil for a download whose program reads its manager's stream only
    /// (`DownloadManager.makeDownload(url:options:label:keepingOwnEvents:)`), whose `events` is empty.
    private let queue: EventQueue<DownloadEvent>?
    private let interrupter = Interrupter()
    private let currentState = Mutex(DownloadState.queued)
    private let started = Mutex(false)
    private let forwarding = Mutex<EventReceiver?>(nil)
    /// The warnings reported (`DownloadEvent.isWarning`): each once, however often its cause is met again.
    private let warnings = Mutex<Set<String>>([])
    /// This download's rate limit; its parent is the manager's overall limit, if any.
    let limiter: RateLimiter
    /// The final paths claimed by the downloads of the same `DownloadManager`, and how this one is named there.
    let claims: DestinationClaims?
    /// The user's directories the manager's downloads checked and opened already, if any.
    let directories: OpenDirectories?
    /// The checksum files read already: the manager's, or this download's own.
    let checksumFiles: ChecksumFiles
    let label: String?
    /// How another download that wants this one's final path names it, and how this one's own such error begins:
    /// `label`, else the URL without its login.
    var claimLabel: String { label ?? URLUserinfo.removed(from: url) }
    /// The manager's pools, shared with its other downloads, one of which the download takes as it starts
    /// (its connection budget with it); nil for a download made on its own, which runs on a pool of its own (see
    /// `performHere`).
    let lanes: PoolLanes?
    /// Where the user's credentials may go (`DownloadJob.credentials`), worked out as the download is made, on the
    /// thread that makes it: its manager asks it for the host of `url` too (`CredentialScope.origin(of:)`).
    let credentials: CredentialScope

    /// - Parameter options: where the file goes and how it is fetched; see `DownloadOptions`.
    public convenience init(url: String, options: DownloadOptions = DownloadOptions()) {
        self.init(
            url: url, options: options, lanes: nil, overallLimiter: nil, claims: nil, directories: nil,
            checksumFiles: nil, label: nil)
    }

    init(
        url: String,
        options: DownloadOptions,
        lanes: PoolLanes?,
        overallLimiter: RateLimiter?,
        claims: DestinationClaims?,
        directories: OpenDirectories?,
        checksumFiles: ChecksumFiles?,
        label: String?,
        keepsOwnEvents: Bool = true
    ) {
        queue = keepsOwnEvents ? EventQueue() : nil
        self.directories = directories
        self.checksumFiles = checksumFiles ?? ChecksumFiles()
        self.url = url
        self.lanes = lanes
        self.options = options
        limiter = RateLimiter(rate: options.rateLimit, parent: overallLimiter)
        self.claims = claims
        self.label = label
        credentials = DownloadJob.scope(of: url, options: options)
        // A list of many small files makes a download for each: one that keeps no events of its own shares an
        // empty stream rather than making a queue and a stream of its own.
        events = queue?.stream ?? Self.noEvents
    }

    /// The `events` of a download that keeps none: it ends at once.
    private static let noEvents = AsyncStream<DownloadEvent> { $0.finish() }

    /// Where the download is now.
    public var state: DownloadState { currentState.withLock { $0 } }

    /// Bytes a second this download may receive, all its connections together; nil for no limit. It starts as
    /// `options.rateLimit` and can be changed at any time, also while the download runs: the new rate holds from
    /// the next chunk on. A `DownloadManager`'s overall limit applies as well.
    public var rateLimit: Int64? {
        get { limiter.rate }
        set { limiter.rate = newValue }
    }

    /// Downloads, verifies and moves the file into place, and returns once it is there (across any pauses).
    ///
    /// Cancelling the task that awaits it cancels the download, keeping the partial file (as `cancel()` does).
    ///
    /// - Throws: `BraidError`; its `code` says what kind of failure it was (`.cancelled` after `cancel` or task
    ///   cancellation, `.interrupted` after `interrupt`). A download can be run once, and not once submitted to a
    ///   `DownloadManager`, which runs it; run a new `Download` to retry.
    public func run() async throws(BraidError) -> DownloadResult {
        guard claim() else {
            throw BraidError(.usage, "this download has already been run; create a new Download")
        }
        // Cancelling the calling task cancels the download as `cancel()` does: progress is kept for a later run.
        let result = await withTaskCancellationHandler {
            await perform(logger: Logger.current)
        } onCancel: {
            cancel()
        }
        return try result.get()
    }

    /// Marks the download as run (or about to be); false when it already was.
    func claim() -> Bool {
        started.withLock { started in
            defer { started = true }
            return !started
        }
    }

    /// Where every event of the download also goes, besides `events`: its manager's stream.
    func forward(to receiver: @escaping @Sendable (DownloadEvent) -> Void) {
        forwarding.withLock { $0 = EventReceiver(receive: receiver) }
    }

    /// Runs a claimed download to its end on one of `BlockingThreads`, logging to `logger`.
    func perform(logger: Logger) async -> Result<DownloadResult, BraidError> {
        await withCheckedContinuation { waiter in
            BlockingThreads.shared.run { [self] in waiter.resume(returning: performHere(logger: logger)) }
        }
    }

    /// Runs a claimed download to its end on the calling thread, which it blocks: one that may block, such as
    /// one of `BlockingThreads` (never one of Swift concurrency's).
    func performHere(logger: Logger) -> Result<DownloadResult, BraidError> {
        // A download on its own gets a pool of its own rather than a process-wide one: nothing it does (its TLS
        // settings, its idle connections, a stall) reaches another download the program runs.
        let lane = lanes?.enter()
        defer { if let lane { lanes?.leave(lane) } }
        let pool = lane?.pool ?? TransferPool()
        defer { if lane == nil { pool.shutdown() } }
        let job = makeJob(logger: logger, lane: lane, pool: pool)
        return conclude(Result { () throws(BraidError) in try job.run() })
    }

    /// Starts a manager's download on its lane's pool thread, with no thread of its own while its first request
    /// runs (`PooledStart`), where it may (`DownloadJob.startsOnPool`); returns false, having done nothing, where it
    /// may not. `whenDone` is told the outcome on the thread the download ended on: the pool's, or a blocking
    /// thread's (`onBlockingThread`), which may go on with other downloads.
    func startOnPool(
        logger: Logger,
        whenDone: @escaping @Sendable (Result<DownloadResult, BraidError>, _ onBlockingThread: Bool) -> Void
    ) -> Bool {
        guard let lanes, DownloadJob.startsOnPool(url: url, options: options, limiter: limiter) else { return false }
        let lane = lanes.enter()
        let job = makeJob(logger: logger, lane: lane, pool: lane.pool)
        let start = PooledStart(job) { [self] ending in
            switch ending {
            case let .done(result):
                let concluded = conclude(result)
                lanes.leave(lane)
                whenDone(concluded, false)
            case let .handOver(handover):
                goOn(from: handover, with: job, on: lane) { whenDone($0, true) }
            }
        }
        lane.pool.attach(start)
        return true
    }

    /// Goes on, on a blocking thread, from how a start on `lane`'s pool thread ended (`PooledStart`, or a manager's
    /// direct file, `DirectRequest`), for a download whose lane was entered for it: `whenDone` is told the outcome
    /// there, once the lane was left.
    func goOn(
        from handover: PooledStart.Handover, on lane: PoolLanes.Lane, logger: Logger,
        whenDone: @escaping @Sendable (Result<DownloadResult, BraidError>) -> Void
    ) {
        goOn(from: handover, with: makeJob(logger: logger, lane: lane, pool: lane.pool), on: lane, whenDone: whenDone)
    }

    private func goOn(
        from handover: PooledStart.Handover, with job: DownloadJob, on lane: PoolLanes.Lane,
        whenDone: @escaping @Sendable (Result<DownloadResult, BraidError>) -> Void
    ) {
        BlockingThreads.shared.run { [self] in
            let concluded = conclude(Result { () throws(BraidError) in try job.run(continuing: handover) })
            lanes?.leave(lane)
            whenDone(concluded)
        }
    }

    /// The job of one run of the download: on `lane`, its manager's, or else on `pool`, its own.
    private func makeJob(logger base: Logger, lane: PoolLanes.Lane?, pool: TransferPool) -> DownloadJob {
        var logger = base
        logger[metadataKey: "braid.url"] = .stringConvertible(PrintableURL(url: url))
        // Worked out only when debug lines are logged: a list of many small files would pay for it on each.
        logger.debug(
            "\(ProxyRoute(url: url, proxy: options.proxy, noProxy: options.noProxy) { getenv($0).map { String(cString: $0) } })"
        )
        let parsedURL = URLComponents(string: url)
        return DownloadJob(
            url: url,
            options: options,
            interrupter: interrupter,
            budget: lane?.budget,
            limiter: limiter,
            claims: claims,
            directories: directories,
            checksumFiles: checksumFiles,
            pool: pool,
            segmentPool: lane?.segments,
            label: claimLabel,
            logger: logger,
            chunks: chunkChannel,
            parsedURL: parsedURL,
            nameFromURL: DestinationPaths.nameFromURL(parsedURL, for: options.destination),
            credentials: credentials
        ) { [self, logger] event in
            let event = event.sanitised
            if case let .state(state) = event { currentState.withLock { $0 = state } }
            if case let .notice(message) = event, event.isWarning {
                guard warnings.withLock({ $0.insert(message).inserted }) else { return }
            }
            Self.log(event, to: logger)
            report(event)
        }
    }

    /// A URL in a log line's metadata, made safe to log (`PrintableText.sanitised(url:)`) only when a line shows it:
    /// each file of a list is given one, and most are never logged.
    private struct PrintableURL: CustomStringConvertible, Sendable {
        let url: String
        var description: String { PrintableText.sanitised(url: url) }
    }

    /// Reports how a run of the download ended, and returns it.
    private func conclude(_ result: Result<DownloadResult, BraidError>) -> Result<DownloadResult, BraidError> {
        let final: DownloadState
        switch result {
        case .success: final = .completed
        case let .failure(error): final = DownloadState(endedBy: error)
        }
        currentState.withLock { $0 = final }
        report(.state(final))
        queue?.finish()
        if case let .failure(error) = result { chunkChannel.finish(error) } else { chunkChannel.finish(nil) }
        return result
    }

    /// Ends a claimed download that never ran, as running it would have ended: its state, its last event.
    /// - Returns: the final state, which the caller reports to the manager's stream.
    func end(unstarted error: BraidError) -> DownloadState {
        let final = DownloadState(endedBy: error)
        currentState.withLock { $0 = final }
        queue?.push(.state(final))
        queue?.finish()
        return final
    }

    /// A download not started yet is held by its manager (`paused`) or lined up again (`queued`).
    func wait(as state: DownloadState) {
        currentState.withLock { $0 = state }
        queue?.push(.state(state))
    }

    private func report(_ event: DownloadEvent) {
        queue?.push(event)
        forwarding.withLock { $0 }?.receive(event)
    }

    static func log(_ event: DownloadEvent, to logger: Logger) {
        switch event {
        case let .state(state):
            logger.debug("state", metadata: ["braid.state": "\(state.rawValue)"])
        case let .started(resource, path, resumed):
            logger.debug(
                "started",
                metadata: [
                    "braid.path": "\(path)", "braid.length": "\(resource.length ?? -1)",
                    "braid.resumed": "\(resumed)", "braid.segmented": "\(resource.isSegmentable)",
                ]
            )
        case .progress:
            break
        case let .retry(reason, delay):
            logger.debug("retry", metadata: ["braid.reason": "\(reason)", "braid.delay": "\(delay)"])
        case let .notice(message):
            logger.debug("\(message)")
        case let .completed(result):
            logger.debug(
                "completed",
                metadata: ["braid.bytes": "\(result.bytes)", "braid.fetched": "\(result.fetchedBytes)"]
            )
        }
    }

    /// Saves progress and holds the download until `resume()`; `run()` keeps waiting meanwhile. A download submitted
    /// to a `DownloadManager` is paused and resumed through the manager, which then gives its slot to the next.
    public func pause() {
        interrupter.stop(.paused)
    }

    /// Lets a paused download go on: it probes the server again and fetches only what is missing.
    public func resume() {
        interrupter.resume()
    }

    /// Ends the download: `run()` throws a `BraidError` with code `.cancelled`. The partial file and its
    /// manifest are kept (so a later download of the same file resumes) unless `removingPartialFile` is true.
    public func cancel(removingPartialFile: Bool = false) {
        interrupter.stop(.cancelled(removingPartialFile: removingPartialFile))
    }

    /// Saves progress and ends the download, as on SIGINT: `run()` throws with code `.interrupted`.
    public func interrupt() {
        interrupter.stop(.interrupted)
    }
}

/// Where a download's events also go (`Download.forward(to:)`). A closure kept in a generic container such as a
/// `Mutex` is kept in the container's most general form, and each call of it read back from there allocated three
/// times on the heap for the thunks between the two forms; kept in this concrete struct, it is called as it is. A
/// small file of a list reports about six events.
private struct EventReceiver: Sendable {
    let receive: @Sendable (DownloadEvent) -> Void
}

/// A download is identified by the object itself: `download.id` keys a table of what a program knows of it, such as
/// the events of a `DownloadManager`'s stream.
extension Download: Identifiable {}
