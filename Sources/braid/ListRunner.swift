import Braid

/// Runs the entries of a list on one `DownloadManager` (`limits.concurrentDownloads` at a time, their connections
/// counted against its caps), and tells an observer about each download as its events arrive, so that each failure
/// is reported as it happens. A failing download does not stop the others.
final class ListRunner: Sendable {
    /// The list's downloads, in list order.
    let items: [DownloadItem]
    let limits: DownloadManager.Limits
    private let manager: DownloadManager
    /// The downloads, in list order; nil for a job refused before it could be one (`Job.refusal`).
    private let downloads: [Download?]
    private let refusals: [BraidError?]
    private let observer: any ListObserver

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
        let jobs = list.entries.enumerated().map { index, entry in
            Job(
                item: DownloadItem(id: index + 1, url: entry.urls[0], output: entry.output),
                url: entry.urls[0],
                options: Self.options(for: entry, sharing: options),
                label: "line \(entry.line)"
            )
        }
        self.init(jobs: jobs, limits: limits, observer: observer)
    }

    /// Runs `jobs`, whose items are numbered from 1 in order, such as the files of a Metalink.
    init(jobs: [Job], limits: DownloadManager.Limits, observer: any ListObserver) {
        let manager = DownloadManager(limits: limits, streamingStates: observer.readsStates)
        self.manager = manager
        items = jobs.map(\.item)
        downloads = jobs.map { job in
            job.refusal == nil
                ? manager.makeDownload(
                    url: job.url, options: job.options, label: job.label, keepingOwnEvents: false) : nil
        }
        refusals = jobs.map(\.refusal)
        self.limits = limits
        self.observer = observer
    }

    /// The options of one entry: the shared ones, with the entry's own settings and list-mode skipping.
    static func options(for entry: DownloadList.Entry, sharing shared: DownloadOptions) -> DownloadOptions {
        var options = shared
        if let output = entry.output, case let .directory(directory) = shared.destination {
            options.destination = .below(directory, subdirectory: "", name: output)
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

    /// Refuses a list in which two entries would write the same file at the same time: the same `out=` name,
    /// or the same URL with no `out=` name.
    static func checkDistinctOutputs(_ list: DownloadList) throws(BraidError) {
        var seen: [String: Int] = [:]
        for entry in list.entries {
            let key = entry.output.map { "out=" + $0 } ?? entry.urls[0]
            if let earlier = seen[key] {
                let what = entry.output.map { "out=\($0)" } ?? entry.urls[0]
                throw BraidError(
                    .usage, "line \(entry.line): \(what) is already on line \(earlier); give it another out= name")
            }
            seen[key] = entry.line
        }
    }

    /// Runs every download and returns their outcomes in list order.
    func run() async -> [DownloadOutcome] {
        let events = manager.events
        let index = Dictionary(
            uniqueKeysWithValues: downloads.enumerated().compactMap { position, download in
                download.map { ($0.id, position) }
            })
        var outcomes = [DownloadOutcome?](repeating: nil, count: downloads.count)
        for (position, refusal) in refusals.enumerated() {
            guard let refusal else { continue }
            let outcome = DownloadOutcome(
                item: items[position], path: nil, result: .failure(refusal), skipped: false, seconds: 0)
            outcomes[position] = outcome
            observer.finished(outcome)
        }
        manager.submit(downloads.compactMap { $0 })
        manager.finish()
        let clock = ContinuousClock()
        var trackers = [DownloadOutcome.Tracker](repeating: .init(), count: downloads.count)
        var starts = [ContinuousClock.Instant?](repeating: nil, count: downloads.count)
        for await event in events {
            guard let position = index[event.download.id] else { continue }
            switch event {
            case .running:
                if starts[position] == nil { starts[position] = clock.now }
            case let .reported(_, reported):
                // One that never started (interrupted in line) reports nothing but its outcome.
                guard starts[position] != nil else { continue }
                trackers[position].note(reported)
                observer.handle(reported, of: items[position])
            case let .finished(_, result):
                let seconds = starts[position].map { (clock.now - $0).seconds } ?? 0
                let outcome = trackers[position].outcome(of: items[position], result, seconds: seconds)
                outcomes[position] = outcome
                observer.finished(outcome)
            }
        }
        return outcomes.map { $0! }
    }

    /// Interrupts every download, as SIGINT does: running ones save their progress, queued ones never start.
    func interruptAll() {
        manager.interruptAll()
    }
}
