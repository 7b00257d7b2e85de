import Braid
import Synchronization

/// Runs the entries of a list, `limits.concurrentDownloads` at a time, with their connections counted against
/// one `DownloadManager`'s caps, and tells an observer about each download as it goes. A failing download does
/// not stop the others.
///
/// It starts the downloads itself rather than through `DownloadManager.run`, which returns every outcome only at
/// the end: the output reports each failure as it happens.
final class ListRunner: Sendable {
    /// The list's downloads, in list order.
    let items: [DownloadItem]
    let limits: DownloadManager.Limits
    private let downloads: [Download]
    private let refusals: [BraidError?]
    private let observer: any ListObserver
    private let interrupted = Mutex(false)

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
        let manager = DownloadManager(limits: limits)
        items = jobs.map(\.item)
        downloads = jobs.map { manager.makeDownload(url: $0.url, options: $0.options, label: $0.label) }
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
        var outcomes = [DownloadOutcome?](repeating: nil, count: downloads.count)
        await withTaskGroup(of: DownloadOutcome.self) { group in
            var next = 0
            func startNext() {
                guard next < downloads.count else { return }
                let index = next
                next += 1
                group.addTask { await self.run(index) }
            }
            for _ in 0..<limits.concurrentDownloads { startNext() }
            while let outcome = await group.next() {
                outcomes[outcome.item.id - 1] = outcome
                startNext()
            }
        }
        return outcomes.map { $0! }
    }

    /// Interrupts every download, as SIGINT does: running ones save their progress, queued ones never start.
    func interruptAll() {
        interrupted.withLock { $0 = true }
        for download in downloads { download.interrupt() }
    }

    private func run(_ index: Int) async -> DownloadOutcome {
        let item = items[index]
        let download = downloads[index]
        let refusal =
            interrupted.withLock({ $0 }) ? BraidError(.interrupted, "interrupted before it started") : refusals[index]
        if let refusal {
            let outcome = DownloadOutcome(item: item, path: nil, result: .failure(refusal), skipped: false, seconds: 0)
            observer.finished(outcome)
            return outcome
        }
        return await DownloadOutcome.run(download, as: item, reportingTo: observer)
    }
}
