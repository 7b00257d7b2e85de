import ArgumentParser
import Braid

extension DownloadArguments {
    /// Downloads every URL of the list in `source` (a file, or `-` for stdin) and ends with a summary; the exit
    /// status is 0 when all succeeded, else that of the first failure in list order (130 or 143 on a signal).
    func runList(_ source: String) async throws {
        let observer = makeListObserver()
        let list: DownloadList
        do throws(BraidError) {
            list = try DownloadList(parsing: try ListInput.read(source))
            guard !list.entries.isEmpty else {
                throw BraidError(.usage, "the list \(source == "-" ? "on standard input" : source) has no URLs")
            }
            try ListRunner.checkDistinctOutputs(list)
            // The directory is shared by every entry: a problem with it is said once, before any download.
            try sharedOptions.checkDestination()
        } catch {
            observer.failed(error)
            if json { StandardStreams.error("braid: \(error.commandLineMessage(inList: true))\n") }
            throw ExitCode(ExitStatus(error.code).rawValue)
        }
        try await runList(reportingTo: observer) { limits in
            ListRunner(list: list, options: sharedOptions, limits: limits, observer: observer)
        }
    }

    /// What reports a list's downloads: JSON events with `--json`, else lines and a table on stderr.
    func makeListObserver() -> any ListObserver {
        json
            ? JSONEventWriter(inList: true, progressInterval: .seconds(progressInterval)) : ListReporter(quiet: quiet)
    }

    /// Runs the downloads of the runner `makeRunner` makes under this command's limits (`-j` and the connection
    /// caps), reporting to `observer`, and ends with a summary and the list's exit status.
    func runList(
        reportingTo observer: any ListObserver, _ makeRunner: (DownloadManager.Limits) -> ListRunner
    ) async throws {
        if request.insecure { observer.notice("warning: --insecure: TLS certificates are not verified") }

        let concurrency: DownloadManager.Concurrency
        switch concurrentDownloads {
        case let .fixed(count): concurrency = .fixed(count)
        case .automatic: concurrency = .automatic
        }
        let limits = DownloadManager.Limits(
            concurrentDownloads: concurrency,
            maximumConnections: maxConnections,
            maximumConnectionsPerHost: maxConnectionsPerHost ?? 16,
            overallRateLimit: maxOverallLimit?.bytesPerSecond
        )
        let runner = makeRunner(limits)
        let clock = ContinuousClock()
        let start = clock.now
        observer.listStarted(runner.items, limits: limits, directory: directory ?? ".")
        let signals = SignalTrap { runner.interruptAll() }
        let outcomes = await runner.run()
        signals.cancel()

        var status = ExitStatus(outcomes).rawValue
        if let signal = signals.caughtSignal { status = 128 + signal }
        observer.listFinished(outcomes, status: status, seconds: (clock.now - start).seconds)
        if json {
            for outcome in outcomes {
                if let error = outcome.error {
                    StandardStreams.error("braid: [\(outcome.item.id)] \(error.commandLineMessage(inList: true))\n")
                }
            }
        }
        if status != 0 { throw ExitCode(status) }
    }
}
