import Braid
import BraidJSON
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's downloads: the table of tasks (`DownloadTable`), the library's `DownloadManager` that queues and
/// runs them, the session file, and the notifications. The RPC layer calls it; it knows nothing of JSON.
///
/// Every change follows one path: the table decides under the lock and returns effects; the manager is told under
/// the same lock (submit, pause, resume, cancel), so it sees the changes in the order the table made them, and it
/// never calls back; notifying and saving the session happen after the lock is released. What the manager does
/// (a download starts, progresses, ends) comes back through its event stream, read by one task, as table events.
public final class DaemonService: Sendable {
    public struct Configuration: Sendable {
        /// The download directory: every file goes here or below. Absolute, resolved, existing.
        public var directory: String
        /// The session file; nil to keep no session.
        public var sessionPath: String?
        /// Downloads at once (`-j`, aria2's `max-concurrent-downloads`), connections per host, the overall rate.
        public var limits: DownloadManager.Limits
        /// What every download starts from: connections, retries, timeouts. Its destination is ignored.
        public var baseOptions: DownloadOptions
        /// The longest a change waits to be written to the session file (`SessionWriter`): what a kill can lose.
        public var sessionInterval: Duration
        /// Stopped downloads listed at most (aria2's `max-download-result`): past it, the oldest is forgotten.
        public var maximumResults: Int

        public init(
            directory: String,
            sessionPath: String? = nil,
            limits: DownloadManager.Limits = .init(),
            baseOptions: DownloadOptions = DownloadOptions(),
            sessionInterval: Duration = .milliseconds(500),
            maximumResults: Int = 1000
        ) {
            self.directory = directory
            self.sessionPath = sessionPath
            self.limits = limits
            self.baseOptions = baseOptions
            self.sessionInterval = sessionInterval
            self.maximumResults = maximumResults
        }
    }

    private struct State {
        var table: DownloadTable
        var progress: [String: TaskProgress] = [:]
        /// The download of each task submitted to the manager, until it has finished; and the other way round.
        var downloads: [String: Download] = [:]
        var gids: [ObjectIdentifier: String] = [:]
        /// Rate for downloads added without one (aria2's global `max-download-limit`).
        var defaultRateLimit: Int64?
        var stopping = false
        var random = SystemRandomNumberGenerator()
    }

    public let configuration: Configuration
    let manager: DownloadManager
    private let state: Mutex<State>
    private let hub: NotificationHub
    private let session: SessionStore?
    private let writer: SessionWriter?
    private let logger: Logger
    /// The task that reads the manager's events; it ends with them, after `stop()`.
    private let listener = Mutex<Task<Void, Never>?>(nil)

    public init(configuration: Configuration, logger: Logger = Logger(label: "braid.daemon")) {
        self.configuration = configuration
        self.logger = logger
        hub = NotificationHub { [logger] in
            logger.warning(
                """
                a WebSocket client fell \(NotificationHub.maximumBytes >> 20) MiB of notifications behind and was \
                disconnected, so that it knows to ask for the state again rather than miss some
                """)
        }
        manager = DownloadManager(limits: configuration.limits)
        state = Mutex(State(table: DownloadTable(maximumResults: configuration.maximumResults)))
        let session = configuration.sessionPath.map(SessionStore.init(path:))
        self.session = session
        writer = session.map { SessionWriter(store: $0, interval: configuration.sessionInterval) }
        for path in session?.paths ?? [] {
            manager.reserve(Self.spelledAsDownloads(path), for: "the daemon's session file \(path)")
        }
        let events = manager.events
        listener.withLock {
            $0 = Task.detached { [weak self] in
                for await event in events { self?.handle(event) }
            }
        }
    }

    deinit {
        // Ends the listener once the downloads have ended (`stop()` has normally ended them already).
        manager.finish()
    }

    // MARK: Life

    /// Reads the session and starts what was running: active and waiting downloads resume from their manifests,
    /// paused ones stay paused, stopped ones are listed.
    ///
    /// Every download it lists is checked as if a client had just asked for it (`TaskRequest.checked`), and the
    /// path it chose must be a plain name in its directory and none of the daemon's own files: a session file is
    /// no more trusted than a client.
    ///
    /// - Throws: `BraidError` (`.manifest`) when the session file cannot be read, is not a Braid session, could have
    ///   been written by another user, or lists a download that would not be accepted now; the daemon does not
    ///   start, and the file is left as it is.
    public func start() throws(BraidError) {
        guard let session else { return }
        let tasks = try session.load().map { task throws(BraidError) in try checked(task, from: session) }
        apply { table in tasks.flatMap { table.add($0) } }
    }

    /// What keeps a file a download to `path` would write: one of the daemon's own files; nil when none does.
    public func reservation(ofDestination path: String) -> String? {
        manager.reservation(ofDestination: path)
    }

    /// A saved download checked as a new one from a client is, with its chosen path.
    private func checked(_ task: DaemonTask, from session: SessionStore) throws(BraidError) -> DaemonTask {
        func refuse(_ reason: String) -> BraidError {
            BraidError(
                .manifest,
                "the session file \(session.path) lists download \(task.gid), which would not be accepted now: "
                    + "\(reason); the daemon does not start with it: fix the file or move it away")
        }
        var task = task
        do throws(TaskRequest.Refusal) {
            let root: DownloadDirectory
            do throws(DownloadDirectory.Refusal) {
                root = try DownloadDirectory(configuration.directory)
            } catch {
                throw TaskRequest.Refusal(option: "dir", message: error.message)
            }
            task.request = try task.request.checked(in: root, reservation: manager.reservation(ofDestination:))
        } catch {
            throw refuse(error.message)
        }
        if let path = task.path {
            let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
            guard path == task.request.directory + "/" + name, !name.isEmpty, name != ".", name != ".." else {
                throw refuse("its file \(path) is not in its directory \(task.request.directory)")
            }
            if let owner = manager.reservation(ofDestination: path) { throw refuse("its file \(path) is \(owner)") }
        }
        return task
    }

    /// `path` spelled as the downloads' paths are: absolute, its directory's links resolved (as the download
    /// directory's are), so that a reservation of it matches a download's path to the same file.
    private static func spelledAsDownloads(_ path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let parent = slash.map { path[..<$0].isEmpty ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let resolved = realpath(parent, nil) else { return path }
        defer { free(resolved) }
        let directory = String(cString: resolved)
        return directory == "/" ? "/" + name : directory + "/" + name
    }

    /// Interrupts every transfer (their progress is saved in their manifests), waits for them, and saves the
    /// session with them as waiting (paused ones paused), to be resumed by the next start. Notification streams end.
    public func stop() async {
        state.withLock { $0.stopping = true }
        manager.interruptAll()
        manager.finish()
        await listener.withLock { $0 }?.value
        do throws(BraidError) {
            try await writer?.close { [self] in state.withLock { $0.table.allTasks } }
        } catch {
            logger.error("\(error.message)")
        }
        hub.finish()
    }

    /// Notifications from now on, for one WebSocket client.
    public func notifications() -> AsyncStream<[UInt8]> { hub.subscribe() }

    // MARK: Changes

    /// Adds a download; it starts when a slot is free, or waits paused when `paused`.
    ///
    /// - Parameter position: where in the waiting queue (0 first); the end when nil.
    /// - Returns: the new download's gid.
    public func add(_ request: TaskRequest, paused: Bool = false, position: Int? = nil) -> String {
        var gid = ""
        apply { state, table in
            repeat {
                gid = Self.makeGID(using: &state.random)
            } while table.task(gid) != nil
            var request = request
            if request.rateLimit == nil { request.rateLimit = state.defaultRateLimit }
            return table.add(DaemonTask(gid: gid, request: request, status: paused ? .paused : .waiting), at: position)
        }
        return gid
    }

    public func pause(_ gid: String) throws(DownloadTable.Refusal) {
        try apply { table throws(DownloadTable.Refusal) in try table.pause(gid) }
    }

    /// Pauses every active and waiting download.
    public func pauseAll() {
        apply { table in
            (table.activeTasks + table.waitingTasks).filter { $0.status != .paused }
                .flatMap { (try? table.pause($0.gid)) ?? [] }
        }
    }

    public func unpause(_ gid: String) throws(DownloadTable.Refusal) {
        try apply { table throws(DownloadTable.Refusal) in try table.unpause(gid) }
    }

    /// Lets every paused download wait for a slot again.
    public func unpauseAll() {
        apply { table in
            table.waitingTasks.filter { $0.status == .paused }.flatMap { (try? table.unpause($0.gid)) ?? [] }
        }
    }

    /// aria2's `changePosition`: moves a waiting or paused download in the queue (`DownloadTable.move`).
    /// - Returns: its new place, 0 first.
    public func changePosition(
        _ gid: String, by offset: Int, from origin: DownloadTable.Origin
    ) throws(DownloadTable.Refusal) -> Int {
        var position = 0
        try apply { table throws(DownloadTable.Refusal) in
            let moved = try table.move(gid, by: offset, from: origin)
            position = moved.position
            return moved.effects
        }
        return position
    }

    public func remove(_ gid: String) throws(DownloadTable.Refusal) {
        try apply { table throws(DownloadTable.Refusal) in try table.remove(gid) }
    }

    public func removeResult(_ gid: String) throws(DownloadTable.Refusal) {
        try apply { table throws(DownloadTable.Refusal) in
            try table.removeResult(gid)
            return []
        }
    }

    public func purgeResults() {
        apply { table in
            table.purgeResults()
            return []
        }
    }

    /// aria2's `max-concurrent-downloads`: more start at once when it grows; when it shrinks, running ones finish,
    /// and none starts until fewer run.
    public func setMaximumActive(_ count: Int) {
        manager.concurrentDownloads = .fixed(max(1, count))
    }

    /// aria2's `max-overall-download-limit`: all downloads together; nil for none.
    public var overallRateLimit: Int64? {
        get { manager.overallRateLimit }
        set { manager.overallRateLimit = newValue }
    }

    /// aria2's global `max-download-limit`: the rate of downloads added from now on without one of their own.
    public var defaultRateLimit: Int64? {
        get { state.withLock { $0.defaultRateLimit } }
        set { state.withLock { $0.defaultRateLimit = newValue } }
    }

    /// aria2's `max-download-limit` of one download, running or not.
    public func setRateLimit(_ rate: Int64?, of gid: String) throws(DownloadTable.Refusal) {
        let download: Download? = try state.withLock { state throws(DownloadTable.Refusal) in
            guard state.table.task(gid) != nil else { throw DownloadTable.notFound(gid) }
            state.table.update(gid) { $0.request.rateLimit = rate }
            return state.downloads[gid]
        }
        download?.rateLimit = rate
        sessionChanged()
    }

    /// Writes the session now (aria2's `saveSession`), rather than within `sessionInterval`.
    public func saveSession() async throws(BraidError) {
        guard let writer else { throw BraidError(.usage, "no session file was given (--session)") }
        try await writer.write { [self] in state.withLock { $0.table.allTasks } }
    }

    // MARK: Reading

    /// A download and its live figures.
    public struct Snapshot: Sendable {
        public var task: DaemonTask
        public var progress: TaskProgress?
    }

    /// The gid a client means by `text`: itself, or the one gid it begins (`DownloadTable.resolve`).
    public func resolve(_ text: String) throws(DownloadTable.Refusal) -> String {
        try state.withLock { state throws(DownloadTable.Refusal) in try state.table.resolve(text) }
    }

    public func snapshot(_ gid: String) -> Snapshot? {
        state.withLock { state in
            state.table.task(gid).map { Snapshot(task: $0, progress: state.progress[$0.gid]) }
        }
    }

    public func active() -> [Snapshot] {
        state.withLock { state in state.table.activeTasks.map { Snapshot(task: $0, progress: state.progress[$0.gid]) } }
    }

    public func waiting() -> [Snapshot] {
        state.withLock { state in state.table.waitingTasks.map { Snapshot(task: $0, progress: state.progress[$0.gid]) }
        }
    }

    public func stopped() -> [Snapshot] {
        state.withLock { state in state.table.stoppedTasks.map { Snapshot(task: $0, progress: nil) } }
    }

    /// aria2's `getGlobalStat`.
    public struct GlobalStat: Sendable, Equatable {
        public var bytesPerSecond: Double
        public var active: Int
        public var waiting: Int
        public var stopped: Int
        public var stoppedTotal: Int
    }

    public func globalStat() -> GlobalStat {
        state.withLock { state in
            GlobalStat(
                bytesPerSecond: state.table.activeTasks.reduce(0) {
                    $0 + (state.progress[$1.gid]?.bytesPerSecond ?? 0)
                },
                active: state.table.activeTasks.count,
                waiting: state.table.waitingTasks.count,
                stopped: state.table.stoppedTasks.count,
                stoppedTotal: state.table.stoppedTotal
            )
        }
    }

    /// Downloads that may run at once now.
    public var maximumActive: Int {
        switch manager.concurrentDownloads {
        case let .fixed(count): count
        case .automatic: DownloadManager.Concurrency.automaticCeiling
        }
    }

    // MARK: Effects

    private func apply<Failure: Error>(
        _ change: (inout DownloadTable) throws(Failure) -> [DownloadTable.Effect]
    ) throws(Failure) {
        try apply { (_: inout State, table: inout DownloadTable) throws(Failure) in try change(&table) }
    }

    /// Changes the table under the lock and tells the manager what it decided; notifies and saves after.
    private func apply<Failure: Error>(
        _ change: (inout State, inout DownloadTable) throws(Failure) -> [DownloadTable.Effect]
    ) throws(Failure) {
        var notifications: [(String, String)] = []
        try state.withLock { state throws(Failure) in
            var table = state.table
            let effects = try change(&state, &table)
            state.table = table
            for effect in effects {
                switch effect {
                case let .submit(task):
                    guard !state.stopping else { continue }
                    let download = manager.makeDownload(
                        url: task.request.uris.first ?? "",
                        options: downloadOptions(for: task),
                        label: task.gid,
                        keepingOwnEvents: false
                    )
                    state.downloads[task.gid] = download
                    state.gids[download.id] = task.gid
                    manager.submit(download, paused: task.status == .paused)
                case let .pause(gid):
                    // Its live figures stay until its transfer has stopped (`observe`): the bytes that arrive
                    // meanwhile are saved with the rest, and `braid.state` says "paused" only once it has.
                    if let download = state.downloads[gid] { manager.pause(download) }
                case let .resume(gid):
                    if let download = state.downloads[gid] { manager.resume(download) }
                case let .cancel(gid):
                    if let download = state.downloads[gid] { manager.cancel(download) }
                case let .reorder(gids):
                    manager.reorder(gids.compactMap { state.downloads[$0] })
                case let .notify(method, gid):
                    notifications.append((method, gid))
                }
            }
        }
        for (method, gid) in notifications {
            hub.publish(
                JSON.object([
                    ("jsonrpc", .string("2.0")), ("method", .string(method)),
                    ("params", .array([.object([("gid", .string(gid))])])),
                ]).bytes)
        }
        sessionChanged()
    }

    /// The table changed: the session is written within `sessionInterval`, with whatever else changes meanwhile.
    private func sessionChanged() {
        writer?.changed(
            { self.state.withLock { $0.table.allTasks } },
            failed: { [logger] (error: BraidError) in logger.error("\(error.message)") })
    }

    /// The library's options for a task: the daemon's base, the task's request, and the path chosen before.
    private func downloadOptions(for task: DaemonTask) -> DownloadOptions {
        var options = configuration.baseOptions
        // Below the root, always: the library opens every directory under it without following links.
        let root = configuration.directory
        if let path = task.path, let slash = path.lastIndex(of: "/") {
            // This task chose the path before: a file there is its own, finished just before a crash or a stop
            // that the session did not see. It is checked, not refetched or refused.
            let name = String(path[path.index(after: slash)...])
            options.destination = DownloadDirectory.destination(
                root: root, directory: String(path[..<slash]), output: name)
            options.skipExistingIfVerified = true
        } else {
            options.destination = DownloadDirectory.destination(
                root: root, directory: task.request.directory, output: task.request.output)
        }
        options.mirrors = Array(task.request.uris.dropFirst())
        if let connections = task.request.connections { options.connections = connections }
        options.headers = configuration.baseOptions.headers + task.request.headers
        options.rateLimit = task.request.rateLimit
        options.metalinkDigests = task.request.metalinkDigests ?? []
        options.pieceHashes = task.request.pieces
        options.expectedLength = task.request.metalinkLength
        // Checked when the request came (`TaskRequest.checked`), from a client or the session file.
        if let peers = task.request.cachePeers, let list = try? CachePeer.list(parsing: peers) {
            options.cachePeers = list
        }
        if let checksum = task.request.checksum {
            options.expectedDigest = try? ExpectedDigest(checksumArgument: checksum)
        }
        return options
    }

    /// What the manager says of a task's download: it runs (the task is active), it reports (the task's figures),
    /// it ended (the table hears how).
    private func handle(_ event: DownloadManager.Event) {
        guard let gid = state.withLock({ $0.gids[event.download.id] }) else { return }
        switch event {
        case .running:
            apply { state, table in
                let effects = table.started(gid)
                if table.task(gid)?.status == .active { state.progress[gid] = TaskProgress() }
                return effects
            }
        case let .reported(_, reported):
            observe(reported, of: gid)
        case let .finished(download, result):
            let outcome: DownloadTable.Outcome
            switch result {
            case let .success(result):
                outcome = .completed(path: result.path, length: result.bytes, verification: result.verification)
            case let .failure(error):
                switch error.code {
                case .interrupted, .cancelled: outcome = .stopped
                default: outcome = .failed(code: Aria2ErrorCode.of(error), message: error.message)
                }
            }
            apply { state, table in
                state.downloads[gid] = nil
                state.gids[download.id] = nil
                state.progress[gid] = nil
                return table.finished(gid, outcome)
            }
            // Its name is free for the next download a client adds to it: an add after a failed or removed one,
            // as aria2 allows, finds what it left there as files already there.
            manager.releaseDestination(of: download)
        }
    }

    private func observe(_ event: DownloadEvent, of gid: String) {
        var pathChosen = false
        state.withLock { state in
            switch event {
            case let .state(downloadState):
                // A paused download has no live figures once its transfer has stopped, its progress saved: its
                // byte count is then what a resume keeps.
                if downloadState == .paused {
                    state.progress[gid] = nil
                } else {
                    state.progress[gid]?.state = downloadState.rawValue
                }
            case let .started(resource, path, resumedBytes):
                pathChosen = state.table.task(gid)?.path != path
                state.table.update(gid) { task in
                    task.path = path
                    task.totalLength = resource.length
                    task.completedLength = resumedBytes
                }
            case let .progress(progress):
                state.table.update(gid) { task in
                    task.completedLength = progress.downloadedBytes
                    if let total = progress.totalBytes { task.totalLength = total }
                }
                state.progress[gid]?.bytesPerSecond = progress.bytesPerSecond
                state.progress[gid]?.connections = progress.activeConnections
                state.progress[gid]?.etaSeconds = progress.estimatedSecondsRemaining
                state.progress[gid]?.segments = progress.segments.map {
                    TaskProgress.Segment(start: $0.start, end: $0.end, done: $0.doneBytes, active: $0.isActive)
                }
            case .retry, .notice, .completed:
                break
            }
        }
        // The chosen path is what a restart resumes into, and finds a file finished before a kill by.
        if pathChosen { sessionChanged() }
    }

    private static func makeGID(using random: inout SystemRandomNumberGenerator) -> String {
        let hex = String(random.next() as UInt64, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
