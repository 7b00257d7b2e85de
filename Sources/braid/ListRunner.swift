import Braid
import Synchronization

/// Runs the entries of a list on one `DownloadManager` (`limits.concurrentDownloads` at a time, their connections
/// counted against its caps), and tells an observer about each download as its events arrive, so that each failure
/// is reported as it happens. A failing download does not stop the others.
///
/// Each entry is submitted as the manager makes it (`DownloadManager.makeSubmission`): a direct file where it may
/// be one, whose events and end come from the thread that ends it (`directFileReported`), else a download, whose
/// events come on the manager's stream. They are made and submitted a batch at a time (`batchSize`), the first
/// before any event is read and each next one as entries end, so that the first downloads run while the rest of a
/// long list are made: ten thousand took 150 ms, which the first file waited for. A batch is made once fewer than
/// `lookahead` submitted entries are left unfinished, so that a list of a million files holds a few hundred at a
/// time, not a million (each about 1 KiB, with its options, waiting in the manager's queue).
final class ListRunner: Sendable {
    /// The list's downloads, in list order.
    let items: [DownloadItem]
    let limits: DownloadManager.Limits
    private let manager: DownloadManager
    /// The job of each item, by its position in `items`.
    private let job: @Sendable (Int) -> Job
    private let observer: any ListObserver

    /// How many downloads are made before they are submitted: four times the most `-j auto` runs at once; a larger
    /// `-j` fills as the next batches come, one an event.
    static let batchSize = 256

    /// How few submitted downloads may be left unfinished before the next batch is made: a batch more than the most
    /// that run at once, so that one waits in line whenever a slot frees.
    var lookahead: Int {
        let running =
            switch limits.concurrentDownloads {
            case let .fixed(count): count
            case .automatic: DownloadManager.Concurrency.automaticCeiling
            }
        return Self.batchSize + running
    }

    /// One download of the run: how the output names it, and what `Download` is given.
    struct Job {
        let item: DownloadItem
        let url: String
        let options: DownloadOptions
        /// Names the download in the library's log lines, such as `line 3` of a list.
        let label: String
        /// Why this entry is not downloaded at all (an object whose key cannot be a file below the directory): it
        /// is reported as failed with this error, and the others run.
        var refusal: BraidError? = nil
    }

    /// - Parameter options: what every download shares; each entry adds its destination, mirrors, digest,
    ///   connections, headers and proxy.
    convenience init(
        list: DownloadList, options: DownloadOptions, limits: DownloadManager.Limits, observer: any ListObserver
    ) {
        let entries = list.entries
        let items = entries.enumerated().map { index, entry in
            DownloadItem(id: index + 1, url: entry.urls[0], output: entry.outputPath)
        }
        self.init(items: items, limits: limits, observer: observer) { position in
            let entry = entries[position]
            return Job(
                item: items[position], url: entry.urls[0], options: Self.options(for: entry, sharing: options),
                label: "line \(entry.line)")
        }
    }

    /// Runs `jobs`, whose items are numbered from 1 in order, such as the files of a Metalink.
    convenience init(jobs: [Job], limits: DownloadManager.Limits, observer: any ListObserver) {
        self.init(items: jobs.map(\.item), limits: limits, observer: observer) { jobs[$0] }
    }

    /// Runs the job of each of `items`, made by `job` from its position when its batch is submitted.
    private init(
        items: [DownloadItem], limits: DownloadManager.Limits, observer: any ListObserver,
        job: @escaping @Sendable (Int) -> Job
    ) {
        manager = DownloadManager(limits: limits, streamingStates: observer.readsStates)
        progress = Mutex(
            Progress(
                summaries: items.map { DownloadOutcome.Summary(item: $0, path: nil, seconds: 0, ending: Self.unended) })
        )
        self.items = items
        self.job = job
        self.limits = limits
        self.observer = observer
    }

    /// The options of one entry: the shared ones, with the entry's own settings and list-mode skipping.
    static func options(for entry: DownloadList.Entry, sharing shared: DownloadOptions) -> DownloadOptions {
        var options = shared
        // `dir=sub`, `out=sub/name`: the subdirectories are made and opened below the directory, never through a
        // link. With `dir=` alone, the server's name or the URL's names the file there.
        if case let .directory(directory) = shared.destination {
            if let path = entry.outputPath {
                let slash = path.lastIndex(of: "/")
                options.destination = .below(
                    directory, subdirectory: slash.map { String(path[..<$0]) } ?? "",
                    name: slash.map { String(path[path.index(after: $0)...]) } ?? path)
            } else if let subdirectory = entry.directory {
                options.destination = .below(directory, subdirectory: subdirectory, name: nil)
            }
        }
        options.mirrors = Array(entry.urls.dropFirst())
        options.expectedDigest = entry.checksum
        if let connections = entry.connections {
            options.connections = connections
            options.automaticConnections = false
        }
        if entry.automaticConnections { options.automaticConnections = true }
        options.headers = shared.headers + entry.headers
        if let proxy = entry.proxy { options.proxy = proxy }
        if let rateLimit = entry.rateLimit { options.rateLimit = rateLimit }
        if let cachePeers = entry.cachePeers { options.cachePeers = cachePeers }
        // Running the same list again verifies and skips what is already complete instead of failing.
        options.skipExistingIfVerified = true
        return options
    }

    /// Refuses a list in which two entries would write the same file at the same time: the same path that `dir=`
    /// and `out=` give, or the same URL into the same `dir=` with no `out=` name.
    static func checkDistinctOutputs(_ list: DownloadList) throws(BraidError) {
        // The line of each path that `dir=` and `out=` give, and of each URL without `out=` by its `dir=`.
        var byPath: [String: Int] = [:]
        var byURL: [String: Int] = [:]
        byPath.reserveCapacity(list.entries.count)
        for entry in list.entries {
            let earlier: Int?
            if let path = entry.outputPath {
                earlier = byPath.updateValue(entry.line, forKey: path)
            } else {
                earlier = byURL.updateValue(
                    entry.line, forKey: entry.urls[0] + (entry.directory.map { " dir=" + $0 } ?? ""))
            }
            if let earlier {
                let what = entry.outputPath.map { "out=\($0)" } ?? entry.urls[0]
                throw BraidError(
                    .usage, "line \(entry.line): \(what) is already on line \(earlier); give it another out= name")
            }
        }
    }

    /// A submitted download that has not finished: its place in the list, when it started, what its events said.
    private struct Unfinished {
        let position: Int
        var start: ContinuousClock.Instant?
        var tracker = DownloadOutcome.Tracker()
    }

    /// What a run shares between the loop that reads the manager's events and the pools' threads that end the
    /// direct files (`DirectFile`), under one lock.
    private struct Progress {
        /// Each entry's summary in its place, an unfinished one's until it ends: one array, returned as it is (an
        /// array of optionals would be copied whole to unwrap it, two summaries a file at once at the end). The
        /// placeholders share one boxed error.
        var summaries: [DownloadOutcome.Summary]
        /// Submitted downloads (a direct file handed over among them) by download: only the few hundred submitted
        /// and not finished are held (`lookahead`).
        var unfinished: [ObjectIdentifier: Unfinished] = [:]
        /// Submitted entries not finished, direct files among them.
        var pending = 0
        /// What the events of the direct files that reported some before their end said, by place in the list.
        var reporting: [Int: DownloadOutcome.Tracker] = [:]
        /// The first entry not submitted.
        var next = 0
        /// Whether a batch is being made and submitted: one at a time, by whichever thread found room first.
        var submitting = false
    }

    private let progress: Mutex<Progress>

    /// What one event of the manager's stream comes to, once the lock is released.
    private enum Step {
        case none
        case handle(DownloadEvent, DownloadItem)
        case finished(DownloadOutcome)
    }

    /// Runs every download and returns what the summary keeps of their outcomes, in list order.
    func run() async -> [DownloadOutcome.Summary] {
        let events = manager.events
        submitBatches()
        for await event in events {
            // Looked up once an event: each event of each file comes here.
            let step: Step = progress.withLock { progress in
                guard let slot = progress.unfinished.index(forKey: event.download.id) else { return .none }
                let position = progress.unfinished.values[slot].position
                switch event {
                case .running:
                    if progress.unfinished.values[slot].start == nil {
                        progress.unfinished.values[slot].start = clock.now
                    }
                    return .none
                case let .reported(_, reported):
                    // One that never started (interrupted in line) reports nothing but its outcome.
                    guard progress.unfinished.values[slot].start != nil else { return .none }
                    progress.unfinished.values[slot].tracker.note(reported)
                    return .handle(reported, items[position])
                case let .finished(_, result):
                    let ended = progress.unfinished.remove(at: slot).value
                    let seconds = ended.start.map { (clock.now - $0).seconds } ?? 0
                    let outcome = ended.tracker.outcome(of: items[position], result, seconds: seconds)
                    progress.summaries[position] = outcome.summary
                    progress.pending -= 1
                    return .finished(outcome)
                }
            }
            switch step {
            case .none:
                break
            case let .handle(reported, item):
                observer.handle(reported, of: item)
            case let .finished(outcome):
                observer.finished(outcome)
                // The rest of the list is made as the first downloads run.
                submitBatches()
            }
        }
        return progress.withLock { $0.summaries }
    }

    /// Makes and submits the next batches while fewer than `lookahead` submitted entries are unfinished, reporting
    /// refused jobs on the way; once the list is all submitted, says so (`finish()`), which lets the stream end.
    /// Called from the event loop and from the pools' threads as entries end: one thread submits at a time, and a
    /// call that finds another submitting leaves it to that one, which looks again when it is done.
    private func submitBatches() {
        while true {
            let batch: Range<Int>? = progress.withLock { progress in
                guard !progress.submitting, progress.next < items.count, progress.pending < lookahead else {
                    return nil
                }
                progress.submitting = true
                let batch = progress.next..<min(progress.next + Self.batchSize, items.count)
                progress.next = batch.upperBound
                return batch
            }
            guard let batch else { return }
            var submissions: [DownloadManager.Submission] = []
            var downloads: [(ObjectIdentifier, Int)] = []
            var refused: [(Int, DownloadOutcome)] = []
            for position in batch {
                let job = job(position)
                if let refusal = job.refusal {
                    let outcome = DownloadOutcome(
                        item: job.item, path: nil, result: .failure(refusal), skipped: false, seconds: 0)
                    refused.append((position, outcome))
                    continue
                }
                let submission = manager.makeSubmission(
                    url: job.url, options: job.options, label: job.label, tag: position
                ) { [self] file, report in directFileReported(file, report) }
                if case let .download(download) = submission { downloads.append((download.id, position)) }
                submissions.append(submission)
            }
            progress.withLock { progress in
                for (position, outcome) in refused { progress.summaries[position] = outcome.summary }
                progress.pending += submissions.count
                for (id, position) in downloads { progress.unfinished[id] = Unfinished(position: position) }
            }
            for (_, outcome) in refused { observer.finished(outcome) }
            manager.submit(submissions)
            if batch.upperBound == items.count { manager.finish() }
            progress.withLock { $0.submitting = false }
        }
    }

    /// A direct file reported events or ended, on the thread that has it (a pool's): reported as a download's
    /// events and outcome are, or, handed over to a download, followed on the event stream from now on.
    private func directFileReported(_ file: DirectFile, _ report: DirectFile.Report) {
        let item = items[file.tag]
        func reported(_ events: [DownloadEvent]) -> (DownloadOutcome.Tracker, [DownloadEvent]) {
            // Those the manager's stream would carry: a download's come on it.
            let shown = events.filter(manager.streams)
            var tracker = progress.withLock { $0.reporting.removeValue(forKey: file.tag) } ?? DownloadOutcome.Tracker()
            for event in shown { tracker.note(event) }
            return (tracker, shown)
        }
        func end(_ events: [DownloadEvent], _ result: Result<DownloadResult, BraidError>) {
            let (tracker, shown) = reported(events)
            for event in shown { observer.handle(event, of: item) }
            let outcome = tracker.outcome(of: item, result, seconds: (try? result.get())?.seconds ?? 0)
            progress.withLock { progress in
                progress.summaries[file.tag] = outcome.summary
                progress.pending -= 1
            }
            observer.finished(outcome)
            submitBatches()
        }
        switch report {
        case let .reported(events):
            let (tracker, shown) = reported(events)
            progress.withLock { $0.reporting[file.tag] = tracker }
            for event in shown { observer.handle(event, of: item) }
        case let .completed(result, events):
            end(events, .success(result))
        case let .stopped(error, events):
            end(events, .failure(error))
        case let .handedOver(download, events):
            let (tracker, shown) = reported(events)
            progress.withLock {
                $0.unfinished[download.id] = Unfinished(position: file.tag, start: clock.now, tracker: tracker)
            }
            for event in shown { observer.handle(event, of: item) }
        }
    }

    private let clock = ContinuousClock()

    /// How an entry's summary says it ended until it does; every entry ends before `run()` returns.
    private static let unended = DownloadOutcome.Summary.Ending.failed(BraidError(.interrupted, "not finished"))

    /// Interrupts every download, as SIGINT does: running ones save their progress, queued ones never start.
    func interruptAll() {
        manager.interruptAll()
    }
}
