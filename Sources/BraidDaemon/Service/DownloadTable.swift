/// The daemon's downloads in aria2's terms, and every decision about them: their statuses and order, what a pause
/// or a removal asks of a transfer, what a finished transfer becomes. A pure value: each event returns the effects
/// for its owner (`DaemonService`) to perform, so every rule is tested without a network.
///
/// When a download runs is not decided here: every waiting or paused download is submitted to the library's
/// `DownloadManager`, which starts it when a slot is free (`max-concurrent-downloads`) and says so (`started`).
/// A download whose transfer is still winding down (removed while it ran) stays "in flight" until its transfer
/// reports back: its result is not removed before then.
public struct DownloadTable: Sendable {
    /// What the owner does after an event.
    public enum Effect: Sendable, Equatable {
        /// Submit the task's download to the manager, held when the task is paused (resuming from its manifest when
        /// there is one).
        case submit(DaemonTask)
        /// Hold the waiting download, or pause the running one, its progress saved (a pause).
        case pause(gid: String)
        /// Let the held or paused download wait for a slot again (an unpause).
        case resume(gid: String)
        /// Cancel the download, keeping its partial file (a removal).
        case cancel(gid: String)
        /// Put the downloads not running in this order, the waiting queue's (a `changePosition`, or an `addUri`
        /// with a position): the next to start is the first of them.
        case reorder([String])
        /// Send a notification to WebSocket clients: `aria2.onDownloadStart` and so on.
        case notify(method: String, gid: String)
    }

    /// Why an event was refused, in aria2's words.
    public struct Refusal: Error, Equatable, Sendable {
        public let message: String
    }

    private(set) var tasks: [String: DaemonTask] = [:]
    /// Active downloads, in the order they started.
    private(set) var active: [String] = []
    /// Waiting and paused downloads, in queue order (aria2 lists both in `tellWaiting`).
    private(set) var waiting: [String] = []
    /// Stopped downloads, oldest first.
    private(set) var stopped: [String] = []
    /// Tasks whose transfer has not reported back yet.
    private(set) var inFlight: Set<String> = []
    /// Stopped downloads since start, including those whose results were removed (aria2's `numStoppedTotal`).
    public private(set) var stoppedTotal = 0
    /// Stopped downloads listed at most (aria2's `max-download-result`); the oldest goes first, as in aria2, so
    /// that a daemon that runs for months holds, answers and saves a bounded list.
    public let maximumResults: Int

    public init(maximumResults: Int = 1000) {
        self.maximumResults = max(0, maximumResults)
    }

    // MARK: Reading

    public func task(_ gid: String) -> DaemonTask? { tasks[gid] }
    public var activeTasks: [DaemonTask] { active.compactMap { tasks[$0] } }
    public var waitingTasks: [DaemonTask] { waiting.compactMap { tasks[$0] } }
    public var stoppedTasks: [DaemonTask] { stopped.compactMap { tasks[$0] } }
    /// Every task, active first, then waiting, then stopped: the order a session is saved in.
    public var allTasks: [DaemonTask] { activeTasks + waitingTasks + stoppedTasks }

    /// The gid a client means by `text`, as aria2 reads one (`GroupId::expandUnique`): a gid listed here, or the
    /// first of its 16 hex digits, in either case, when no other gid listed begins with them: aria2 answers
    /// `tellStatus 2089b0` for the one download whose gid begins so, and so does the daemon.
    public func resolve(_ text: String) throws(Refusal) -> String {
        if tasks[text] != nil { return text }
        // At most a line of it in a refusal: a client may send megabytes.
        let shown = text.count > 100 ? text.prefix(100) + "…" : Substring(text)
        let prefix = text.lowercased()
        guard (1...16).contains(prefix.utf8.count), prefix.utf8.allSatisfy(Self.isHexDigit) else {
            throw Refusal(message: "Invalid GID \(shown)")
        }
        var found: String?
        for gid in tasks.keys where gid.hasPrefix(prefix) {
            guard found == nil else { throw Refusal(message: "GID \(shown) is not unique") }
            found = gid
        }
        guard let found else { throw Self.notFound(String(shown)) }
        return found
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    // MARK: Events

    /// A new download (or one read back from the session), queued at `position` (0 first; past the end, or nil,
    /// last) and submitted; a paused one waits for `unpause`.
    public mutating func add(_ task: DaemonTask, at position: Int? = nil) -> [Effect] {
        var task = task
        switch task.status {
        case .active, .waiting, .paused:
            if task.status == .active { task.status = .waiting }
            tasks[task.gid] = task
            inFlight.insert(task.gid)
            guard let position, position < waiting.count else {
                waiting.append(task.gid)
                return [.submit(task)]
            }
            waiting.insert(task.gid, at: max(0, position))
            return [.submit(task), .reorder(waiting)]
        case .complete, .error, .removed:
            // Read back from the session: counted, so that numStoppedTotal is never below numStopped.
            tasks[task.gid] = task
            stopped.append(task.gid)
            stoppedTotal += 1
            forgetOldestResults()
            return []
        }
    }

    /// The manager started the download, or let a paused one go on: a waiting download is active, announced with
    /// `onDownloadStart`. One paused meanwhile stays paused (the manager pauses it too).
    public mutating func started(_ gid: String) -> [Effect] {
        guard var task = tasks[gid], task.status == .waiting else { return [] }
        task.status = .active
        tasks[gid] = task
        waiting.removeAll { $0 == gid }
        active.append(gid)
        return [.notify(method: "aria2.onDownloadStart", gid: gid)]
    }

    /// aria2's `pause`: a waiting download is held (silently, as aria2 does: it never started); an active one has
    /// its transfer paused and goes to the front of the queue, announced with `onDownloadPause`.
    public mutating func pause(_ gid: String) throws(Refusal) -> [Effect] {
        guard var task = tasks[gid] else { throw Self.notFound(gid) }
        switch task.status {
        case .waiting:
            task.status = .paused
            tasks[gid] = task
            return [.pause(gid: gid)]
        case .active:
            task.status = .paused
            tasks[gid] = task
            active.removeAll { $0 == gid }
            waiting.insert(gid, at: 0)
            return [.pause(gid: gid), .notify(method: "aria2.onDownloadPause", gid: gid)]
        case .paused, .complete, .error, .removed:
            throw Refusal(message: "GID#\(gid) cannot be paused now")
        }
    }

    /// aria2's `unpause`: a paused download waits for a slot again.
    public mutating func unpause(_ gid: String) throws(Refusal) -> [Effect] {
        guard var task = tasks[gid] else { throw Self.notFound(gid) }
        guard task.status == .paused else { throw Refusal(message: "GID#\(gid) cannot be unpaused now") }
        task.status = .waiting
        tasks[gid] = task
        return [.resume(gid: gid)]
    }

    /// Where aria2's `changePosition` counts from.
    public enum Origin: String, Sendable {
        /// The queue's first place.
        case start = "POS_SET"
        /// The download's own place.
        case current = "POS_CUR"
        /// The queue's last place.
        case end = "POS_END"
    }

    /// aria2's `changePosition`: moves a waiting or paused download `offset` places from `origin` in the waiting
    /// queue, stopping at either end, and returns its new place (0 first). An active or stopped download is not in
    /// the queue.
    public mutating func move(
        _ gid: String, by offset: Int, from origin: Origin
    ) throws(Refusal) -> (position: Int, effects: [Effect]) {
        guard tasks[gid] != nil else { throw Self.notFound(gid) }
        guard let current = waiting.firstIndex(of: gid) else {
            throw Refusal(message: "GID#\(gid) not found in the waiting queue.")
        }
        let last = waiting.count - 1
        // Any client's number: no sum below can overflow, and none of the queue's ends moves.
        let offset = min(max(offset, -waiting.count), waiting.count)
        let target =
            switch origin {
            case .start: offset
            case .current: current + offset
            case .end: last + offset
            }
        let position = min(max(target, 0), last)
        guard position != current else { return (position, []) }
        waiting.remove(at: current)
        waiting.insert(gid, at: position)
        return (position, [.reorder(waiting)])
    }

    /// aria2's `remove`. A running download stops for good (its partial file is kept) and is listed as removed,
    /// with aria2's error code 31 and `onDownloadStop`; a waiting or paused one, which never ran or was stopped
    /// already, is forgotten at once, silently, as aria2 forgets it.
    public mutating func remove(_ gid: String) throws(Refusal) -> [Effect] {
        guard var task = tasks[gid] else { throw Self.notFound(gid) }
        switch task.status {
        case .active:
            task.status = .removed
            task.errorCode = Aria2ErrorCode.removed
            tasks[gid] = task
            active.removeAll { $0 == gid }
            stopped.append(gid)
            stoppedTotal += 1
            forgetOldestResults()
            return [.cancel(gid: gid), .notify(method: "aria2.onDownloadStop", gid: gid)]
        case .waiting, .paused:
            tasks[gid] = nil
            waiting.removeAll { $0 == gid }
            // Its download is cancelled (ended at once if it never started), and its report finds nothing to change.
            return inFlight.contains(gid) ? [.cancel(gid: gid)] : []
        case .complete, .error, .removed:
            throw Refusal(message: "Active Download not found for GID#\(gid)")
        }
    }

    /// aria2's `removeDownloadResult`: a stopped download is forgotten.
    public mutating func removeResult(_ gid: String) throws(Refusal) {
        guard let task = tasks[gid] else { throw Self.notFound(gid) }
        guard task.status.isStopped, !inFlight.contains(gid) else {
            throw Refusal(message: "Could not remove download result of GID#\(gid)")
        }
        tasks[gid] = nil
        stopped.removeAll { $0 == gid }
    }

    /// aria2's `purgeDownloadResult`: every stopped download is forgotten.
    public mutating func purgeResults() {
        let kept = stopped.filter { inFlight.contains($0) }
        for gid in stopped where !inFlight.contains(gid) { tasks[gid] = nil }
        stopped = kept
    }

    /// Applies `change` to what a task knows of its file (path, lengths); its status is the table's alone.
    public mutating func update(_ gid: String, _ change: (inout DaemonTask) -> Void) {
        guard var task = tasks[gid] else { return }
        let status = task.status
        change(&task)
        task.status = status
        tasks[gid] = task
    }

    /// How a transfer ended.
    public enum Outcome: Sendable, Equatable {
        case completed(path: String, length: Int64, verification: String)
        /// It stopped because it was told to (pause or removal) and saved its progress.
        case stopped
        case failed(code: Int, message: String)
    }

    /// A transfer reported back. A completed file is complete whatever was asked of it meanwhile; a failure is an
    /// error unless the download was removed (a paused one that failed has nothing left to go on); a transfer
    /// stopped on request leaves the status the request set.
    public mutating func finished(_ gid: String, _ outcome: Outcome) -> [Effect] {
        inFlight.remove(gid)
        guard var task = tasks[gid] else { return [] }
        var effects: [Effect] = []
        switch outcome {
        case let .completed(path, length, verification):
            task.path = path
            task.totalLength = length
            task.completedLength = length
            task.verification = verification
            task.errorCode = nil
            task.errorMessage = nil
            if task.status != .complete {
                if !task.status.isStopped { stoppedTotal += 1 }
                move(gid, toStopped: true)
                task.status = .complete
                effects.append(.notify(method: "aria2.onDownloadComplete", gid: gid))
            }
        case .stopped:
            if task.status == .active {
                // Stopped without being asked (the daemon is shutting down): it waits to be started again.
                task.status = .waiting
                active.removeAll { $0 == gid }
                waiting.insert(gid, at: 0)
            }
        case let .failed(code, message):
            if !task.status.isStopped {
                task.status = .error
                task.errorCode = code
                task.errorMessage = message
                move(gid, toStopped: true)
                stoppedTotal += 1
                effects.append(.notify(method: "aria2.onDownloadError", gid: gid))
            }
        }
        tasks[gid] = task
        return effects
    }

    private mutating func move(_ gid: String, toStopped: Bool) {
        active.removeAll { $0 == gid }
        waiting.removeAll { $0 == gid }
        if toStopped, !stopped.contains(gid) {
            stopped.append(gid)
            forgetOldestResults()
        }
    }

    /// Forgets the oldest stopped downloads past `maximumResults`; one whose transfer has not reported back yet is
    /// kept until it has (as `purgeResults` keeps it), and the newest is never the one forgotten.
    private mutating func forgetOldestResults() {
        var excess = stopped.count - maximumResults
        guard excess > 0 else { return }
        var kept: [String] = []
        kept.reserveCapacity(stopped.count)
        for gid in stopped.dropLast() {
            if excess > 0, !inFlight.contains(gid) {
                tasks[gid] = nil
                excess -= 1
            } else {
                kept.append(gid)
            }
        }
        stopped = kept + stopped.suffix(1)
    }

    static func notFound(_ gid: String) -> Refusal { Refusal(message: "GID \(gid) is not found") }
}
