import Logging
import Synchronization

/// A manager's direct files (`DirectFile`): lined up with its downloads, under the same limits, and run by their
/// lane's pool with no `Download` until one is handed over.
extension DownloadManager {
    /// What a caller that runs many files submits: a download, or a file that may need none.
    package enum Submission: Sendable {
        case download(Download)
        case file(DirectFile)
    }

    /// The file of `url` with `options`, for a caller that runs many and reads the manager's `events` only (as
    /// `makeDownload(url:options:label:keepingOwnEvents:)` with `keepingOwnEvents` false): a direct file where it
    /// may be one (`DirectFile.accepts`), which tells `onReport` what it reports and how it ended, else a download.
    ///
    /// - Parameter tag: the caller's number for the file, such as its place in a list (`DirectFile.tag`).
    package func makeSubmission(
        url: String, options: DownloadOptions, label: String, tag: Int,
        onReport: @escaping @Sendable (DirectFile, DirectFile.Report) -> Void
    ) -> Submission {
        guard DirectFile.accepts(url: url, options: options, limiter: limiter) else {
            return .download(makeDownload(url: url, options: options, label: label, keepingOwnEvents: false))
        }
        return .file(DirectFile(url: url, options: options, label: label, tag: tag, onReport: onReport))
    }

    /// Lines `submissions` up, in order, behind those already waiting, as `submit(_:paused:)` lines downloads up.
    /// Each direct file tells its end to its `onReport` (on the thread it ended on, never under the manager's lock),
    /// and a download it hands over reports on `events` from then on. A direct file submitted before tells a
    /// `.usage` error, as does one submitted after `finish()`.
    package func submit(_ submissions: [Submission]) {
        let logger = Logger.current
        change { state in
            var actions: [DownloadQueue<ObjectIdentifier>.Action] = []
            for submission in submissions {
                switch submission {
                case let .download(download):
                    actions += enqueue(download, waiter: nil, logger: logger, paused: false, into: &state)
                case let .file(file):
                    let id = ObjectIdentifier(file)
                    guard !state.finishing, file.claim() else {
                        let error = Self.refusal(
                            finishing: state.finishing, again: "this file has already been submitted")
                        state.filesEnded.append((file, Self.stopped(error, events: [])))
                        continue
                    }
                    state.files[id] = (file, logger)
                    actions += state.queue.submit(
                        id, host: file.credentials.origin(of: file.url)?.host ?? "", requestedConnections: 1)
                }
            }
            return actions
        }
    }

    /// Starts `file`, at `id` in the queue, on the lane with the fewest downloads (`DirectRequest`); under the lock.
    func start(_ file: DirectFile, as id: ObjectIdentifier, logger: Logger) {
        let lane = lanes.enter()
        let request = DirectRequest(file, on: lane.pool, shared: directShared, logger: logger) { [self] end in
            ended(file, as: id, on: lane, end)
        }
        lane.pool.attach(request)
    }

    /// A direct file's start ended, on its pool's thread: the file ends, or goes on as a download in its place in
    /// the queue, or leaves the queue to wait for its name (`.naming`), and ends once named (`.named`, on the
    /// naming queue's thread). The first download its end lets start goes on from this thread (`goOnFromPool`).
    private func ended(_ file: DirectFile, as id: ObjectIdentifier, on lane: PoolLanes.Lane, _ end: DirectRequest.End) {
        let ending: DirectFile.Report?
        switch end {
        case let .completed(result, events):
            ending = .completed(result, events: events)
        case let .stopped(stop, events):
            ending = Self.stopped(stop.error, events: events)
        case .naming:
            ending = nil
        case let .named(outcome, events):
            switch outcome {
            case let .success(result): file.onReport(file, .completed(result, events: events))
            case let .failure(error): file.onReport(file, Self.stopped(error, events: events))
            }
            // Told before the stream may end on it, so that a caller that reads `events` to its end has every end.
            return state.withLock { state in
                state.naming -= 1
                if state.streamEnds { state.stream?.buffer.finish() }
            }
        case .startAfresh:
            lanes.leave(lane)
            guard let started = handOver(file, as: id, events: []) else { return }
            return goOnFromPool(with: started)
        case let .goOn(handover, events):
            guard let (id, download, logger) = handOver(file, as: id, events: events) else {
                // No longer in the queue (it cannot be, while it runs): nothing waits, paused, on the pool.
                if case let .found(_, _, first?, _)? = handover.probed { first.cancel() }
                return lanes.leave(lane)
            }
            return download.goOn(from: handover, on: lane, logger: logger) { [self] outcome in
                // On a blocking thread, which runs what the end lets start.
                if let next = finished(id, download, outcome) { runHere(next) }
            }
        }
        lanes.leave(lane)
        if let ending { file.onReport(file, ending) }
        let automatic = automatic.load(ordering: .relaxed)
        let next = change(handingOver: true) { state in
            state.files[id] = nil
            if ending == nil { state.naming += 1 }
            // Its one connection counts for the guess at what the next file from its host needs, as a download's
            // start counts (`DownloadQueue.probed`): with `-j auto`, a list's large files then leave room for more
            // small ones.
            return (automatic ? state.queue.probed(id, connections: 1) : []) + state.queue.finished(id)
        }
        if let next { goOnFromPool(with: next) }
    }

    /// How a direct file that ended with `error` reports it, after `events`: with the state a download ends in.
    static func stopped(_ error: BraidError, events: [DownloadEvent]) -> DirectFile.Report {
        .stopped(error, events: events + [.state(DownloadState(endedBy: error))])
    }

    /// Makes `file` a download that takes its place in the queue, having reported `events`; nil when the file is no
    /// longer in the queue.
    private func handOver(_ file: DirectFile, as id: ObjectIdentifier, events: [DownloadEvent]) -> Started? {
        let download = makeDownload(url: file.url, options: file.options, label: file.label, keepingOwnEvents: false)
        _ = download.claim()
        // Told before the download runs, so that the caller knows it before any of its events.
        file.onReport(file, .handedOver(download, events: events))
        return state.withLock { state in
            guard let (_, logger) = state.files.removeValue(forKey: id) else { return nil }
            state.downloads[id] = (download, logger)
            state.handedOver[id] = file
            forward(download, as: id)
            // A stop asked for while its request ran, or since, holds for the download too.
            switch file.stopAsked {
            case .interrupted?: download.interrupt()
            case .cancelled?: download.cancel()
            case nil: break
            }
            state.stream?.buffer.push(.running(download))
            return (id, download, logger)
        }
    }
}
