import Logging
import Synchronization

extension DownloadManager {
    /// Every download's events and outcome, as they happen (see `Event`); it ends after `finish()`, once the last
    /// download has finished. Meant for one consumer, and kept from the first time it is read: read it before
    /// submitting. A slow consumer loses nothing but stale progress: a download's unread `progress` is replaced by
    /// its next one, while every other event is kept.
    public var events: AsyncStream<Event> {
        state.withLock { state in
            if let stream = state.stream { return stream.events }
            let buffer = streamBuffer.storeIfNil(EventQueue<Event>())
            state.stream = (buffer, buffer.stream)
            if state.streamEnds { buffer.finish() }
            return state.stream!.events
        }
    }

    /// Lines `downloads` up, in order, behind those already waiting; they start as the limits allow, or with
    /// `paused` wait for `resume(_:)`. Downloads may come from `makeDownload` of this manager (their connections
    /// then count against its caps) or elsewhere.
    ///
    /// Every download submitted reports exactly one `finished` event. One that cannot be run (it was run or
    /// submitted before, or `finish()` was called) finishes at once with a `.usage` error; one already waiting or
    /// running here is left as it is.
    public func submit(_ downloads: [Download], paused: Bool = false) {
        submit(downloads, paused: paused, onFinish: nil)
    }

    /// Lines one download up; see `submit(_:paused:)`.
    public func submit(_ download: Download, paused: Bool = false) {
        submit([download], paused: paused)
    }

    /// Holds a waiting download, or pauses a running one (its progress saved, its slot given to the next, and
    /// itself first in line), until `resume(_:)`. A paused download keeps its thread, idle, until it goes on or ends.
    public func pause(_ download: Download) {
        change { $0.queue.pause(download.id) }
    }

    /// Lets a held or paused download wait for a slot again; a paused one then goes on where it stopped.
    public func resume(_ download: Download) {
        change { $0.queue.resume(download.id) }
    }

    /// Puts the downloads not running in the order of `downloads` (aria2's `changePosition`): those among them in
    /// line, waiting, held or paused, take the places they hold there, in this order, and every other download keeps
    /// its place. Running downloads are left as they are. The one first in line is the next to start.
    public func reorder(_ downloads: [Download]) {
        let ids = downloads.map(\.id)
        state.withLock { $0.queue.order(ids) }
    }

    /// Ends a download of the manager: one that has not started finishes at once, one that has is cancelled as
    /// `Download.cancel(removingPartialFile:)` does (its outcome `.cancelled`). Others are left alone.
    public func cancel(_ download: Download, removingPartialFile: Bool = false) {
        change { $0.queue.cancel(download.id, removingPartialFile: removingPartialFile) }
    }

    /// Stops everything, as on SIGINT: running and paused downloads save their progress and end with
    /// `.interrupted`, waiting ones end at once ("interrupted before it started"), and nothing starts any more:
    /// a download submitted later ends the same way.
    public func interruptAll() {
        change { $0.queue.interruptAll() }
    }

    /// Accepts no more downloads; `events` ends once every download submitted has finished.
    public func finish() {
        change { state in
            state.finishing = true
            return []
        }
    }

    /// Submits `downloads` and returns each one's outcome, in the same order, once all have ended. Cancelling the
    /// calling task cancels them, running or waiting (each then has a `.cancelled` outcome, its progress kept).
    public func run(_ downloads: [Download]) async -> [Result<DownloadResult, BraidError>] {
        guard !downloads.isEmpty else { return [] }
        let outcomes = Mutex([Result<DownloadResult, BraidError>?](repeating: nil, count: downloads.count))
        await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                submit(downloads, paused: false) { index, outcome in
                    let complete = outcomes.withLock { outcomes in
                        outcomes[index] = outcome
                        return !outcomes.contains { $0 == nil }
                    }
                    if complete { done.resume() }
                }
                if Task.isCancelled { cancelAll(downloads) }
            }
        } onCancel: {
            cancelAll(downloads)
        }
        return outcomes.withLock { $0.map { $0! } }
    }

    // MARK: Performing

    /// Changes the queue under the lock and performs what it decides, then tells the waiters of what ended.
    ///
    /// - Parameter handingOver: whether the calling thread, a download's that has just ended, runs the first
    ///   download the change starts itself: that download is returned rather than handed to another thread.
    @discardableResult
    func change(
        handingOver: Bool = false, _ body: (inout State) -> [DownloadQueue<ObjectIdentifier>.Action]
    ) -> Started? {
        let (ended, filesEnded, kept) = state.withLock { state in
            let kept = perform(body(&state), &state, keepingOne: handingOver)
            defer {
                state.ended.removeAll()
                state.filesEnded.removeAll()
            }
            return (state.ended, state.filesEnded, kept)
        }
        for (waiters, outcome) in ended { for waiter in waiters { waiter(outcome) } }
        if !filesEnded.isEmpty {
            for (file, ending) in filesEnded { file.onReport(file, ending) }
            // Held back until they were told (`perform`): a caller that reads `events` to its end has every end.
            state.withLock { state in
                if state.streamEnds { state.stream?.buffer.finish() }
            }
        }
        return kept
    }

    /// A download started: its place in the queue (its own `id`, or that of the direct file it took over from),
    /// the download, and the logger it was submitted under.
    typealias Started = (id: ObjectIdentifier, download: Download, logger: Logger)

    private func submit(
        _ downloads: [Download],
        paused: Bool,
        onFinish: (@Sendable (Int, Result<DownloadResult, BraidError>) -> Void)?
    ) {
        let logger = Logger.current
        change { state in
            var actions: [DownloadQueue<ObjectIdentifier>.Action] = []
            for (index, download) in downloads.enumerated() {
                let waiter = onFinish.map { onFinish in { @Sendable outcome in onFinish(index, outcome) } }
                actions += enqueue(download, waiter: waiter, logger: logger, paused: paused, into: &state)
            }
            return actions
        }
    }

    /// Lines `download` up under the lock, its outcome promised to `waiter` too; returns what the queue decides.
    func enqueue(
        _ download: Download, waiter: (@Sendable (Result<DownloadResult, BraidError>) -> Void)?, logger: Logger,
        paused: Bool, into state: inout State
    ) -> [DownloadQueue<ObjectIdentifier>.Action] {
        let id = download.id
        if state.queue.contains(id) {
            // Already here: it reports its one outcome, which this caller waits for too.
            if let waiter { state.waiters[id, default: []].append(waiter) }
            return []
        }
        guard !state.finishing, download.claim() else {
            let error = Self.refusal(
                finishing: state.finishing,
                again: "this download has already been run or submitted; create a new Download")
            state.stream?.buffer.push(.finished(download, .failure(error)))
            if let waiter { state.ended.append(([waiter], .failure(error))) }
            return []
        }
        state.downloads[id] = (download, logger)
        if let waiter { state.waiters[id, default: []].append(waiter) }
        forward(download, as: id)
        let requested = download.options.automaticConnections ? 1 : download.options.connections
        return state.queue.submit(
            id, host: download.credentials.origin(of: download.url)?.host ?? "", requestedConnections: requested,
            held: paused)
    }

    /// The usage error a submission is refused with: after `finish()`, or else `again`, for what was submitted
    /// before.
    static func refusal(finishing: Bool, again: String) -> BraidError {
        BraidError(.usage, finishing ? "the download manager was finished; submit downloads before finish()" : again)
    }

    /// Cancels `downloads` at once, under one lock, so that none of them starts while the others are cancelled.
    private func cancelAll(_ downloads: [Download]) {
        change { state in downloads.flatMap { state.queue.cancel($0.id) } }
    }

    /// Sends `download`'s events to `report(_:of:as:)`, as the download at `id` in the queue.
    func forward(_ download: Download, as id: ObjectIdentifier) {
        download.forward { [weak self, weak download] event in
            guard let self, let download else { return }
            report(event, of: download, as: id)
        }
    }

    /// An event of a running download: into the stream, and what it says about its connections into the queue.
    private func report(_ event: DownloadEvent, of download: Download, as id: ObjectIdentifier) {
        // Into the stream after the lock, and without it for an event that tells the queue nothing (most of
        // them): a push may wake the consumer, which every other download's thread would otherwise wait for. The
        // download's own events keep their order, as it reports them one after the other.
        defer { if streams(event) { streamBuffer.load()?.push(.reported(download, event)) } }
        // Only an automatic concurrency counts connections: a fixed one starts the next download as one ends.
        guard automatic.load(ordering: .relaxed) else { return }
        switch event {
        case .started: break
        case .progress where download.options.automaticConnections: break
        default: return
        }
        change { state in
            switch event {
            case let .started(resource, _, _):
                return state.queue.probed(id, connections: Self.plannedConnections(resource, options: download.options))
            case let .progress(progress) where download.options.automaticConnections:
                return state.queue.connections(id, max(progress.activeConnections, progress.targetConnections ?? 0))
            default:
                return []
            }
        }
    }

    /// Whether a download's `event` goes into `events`: every one, unless the manager was made without
    /// `streamingStates`, which leaves out states and results (`DownloadEvent.isStateOrResult`). A caller of
    /// direct files shows those of their events that it says, as the stream would (`DirectFile.Report`).
    package func streams(_ event: DownloadEvent) -> Bool {
        streamsStates || !event.isStateOrResult
    }

    /// The connections a probed download will open: its count, unless the file is too short to split that often
    /// or cannot be split at all; 1 to begin with for automatic connections, which grow from there.
    static func plannedConnections(_ resource: RemoteResource, options: DownloadOptions) -> Int {
        guard resource.isSegmentable, let length = resource.length, !options.automaticConnections else { return 1 }
        let pieces = length / SegmentPlanner.minimumSegment
        return max(1, pieces < Int64(options.connections) ? Int(pieces) : options.connections)
    }

    /// Runs `download` on the calling thread, one of `BlockingThreads`, then each download that its end lets start,
    /// one after the other, until one starts on its pool's thread (`startOnPool`): a list of files hands no work
    /// from thread to thread as one file follows another.
    func runHere(_ started: Started) {
        var next: Started? = started
        while let (id, download, logger) = next, !startOnPool((id, download, logger)) {
            next = finished(id, download, download.performHere(logger: logger))
        }
    }

    /// Starts a download on its lane's pool thread, where it may start there (`Download.startOnPool`); returns
    /// whether it did. The downloads its end starts go on from the thread it ended on: the pool's, which starts
    /// them there too or hands them to a blocking thread, or a blocking thread, which runs them (`runHere`).
    func startOnPool(_ started: Started) -> Bool {
        let (id, download, logger) = started
        return download.startOnPool(logger: logger) { [self] outcome, onBlockingThread in
            guard let next = finished(id, download, outcome) else { return }
            if onBlockingThread {
                runHere(next)
            } else {
                goOnFromPool(with: next)
            }
        }
    }

    /// Runs `next`, a download an end on a pool's thread started, from there: on the pool, or else on a blocking
    /// thread, since the pool's may not wait for it.
    func goOnFromPool(with next: Started) {
        if !startOnPool(next) { BlockingThreads.shared.run { [self] in runHere(next) } }
    }

    /// A download's run returned; returns the first download that its end started, for its thread to run.
    func finished(
        _ id: ObjectIdentifier, _ download: Download, _ outcome: Result<DownloadResult, BraidError>
    ) -> Started? {
        change(handingOver: true) { state in
            state.stream?.buffer.push(.finished(download, outcome))
            state.downloads[id] = nil
            state.handedOver[id] = nil
            state.ended.append((state.waiters.removeValue(forKey: id) ?? [], outcome))
            return state.queue.finished(id)
        }
    }

    /// Performs the queue's actions. Under the lock, so that a pause and a resume reach a download in the order
    /// they were decided: each only signals a download's thread, hands work to a thread or pushes an event; none
    /// blocks or calls back into the manager. The waiters of what ended go to `state.ended`, to be told after the
    /// lock. With `keepingOne`, the first download started is returned instead of handed to a thread.
    private func perform(
        _ actions: [DownloadQueue<ObjectIdentifier>.Action], _ state: inout State, keepingOne: Bool = false
    ) -> Started? {
        var kept: Started?
        for action in actions {
            switch action {
            case let .start(id):
                if let (file, logger) = state.files[id] {
                    start(file, as: id, logger: logger)
                    continue
                }
                guard let (download, logger) = state.downloads[id] else { continue }
                let started = (id, download, logger)
                state.stream?.buffer.push(.running(download))
                if startOnPool(started) { continue }
                if keepingOne && kept == nil {
                    kept = started
                } else {
                    // The thread keeps the manager alive until its download, and those it hands over to, finished.
                    BlockingThreads.shared.run { [self] in runHere(started) }
                }
            case let .proceed(id):
                guard let (download, _) = state.downloads[id] else { continue }
                state.stream?.buffer.push(.running(download))
                download.resume()
            case let .pause(id):
                state.downloads[id]?.download.pause()
            case let .cancel(id, removingPartialFile):
                state.files[id]?.file.stop(.cancelled)
                state.downloads[id]?.download.cancel(removingPartialFile: removingPartialFile)
            case let .interrupt(id):
                state.files[id]?.file.stop(.interrupted)
                state.downloads[id]?.download.interrupt()
            case let .end(id, ending):
                let error =
                    ending == .cancelled
                    ? BraidError(.cancelled, "cancelled before it started")
                    : BraidError(.interrupted, "interrupted before it started")
                if let (file, _) = state.files.removeValue(forKey: id) {
                    // As `Download.end(unstarted:)` ends.
                    state.filesEnded.append((file, Self.stopped(error, events: [])))
                    continue
                }
                guard let (download, _) = state.downloads.removeValue(forKey: id) else { continue }
                state.handedOver[id] = nil
                let final = download.end(unstarted: error)
                if streams(.state(final)) { state.stream?.buffer.push(.reported(download, .state(final))) }
                state.stream?.buffer.push(.finished(download, .failure(error)))
                state.ended.append((state.waiters.removeValue(forKey: id) ?? [], .failure(error)))
            case let .hold(id, held):
                guard let (download, _) = state.downloads[id] else { continue }
                let waiting: DownloadState = held ? .paused : .queued
                download.wait(as: waiting)
                if streams(.state(waiting)) { state.stream?.buffer.push(.reported(download, .state(waiting))) }
            }
        }
        if state.streamEnds { state.stream?.buffer.finish() }
        return kept
    }
}
