import ArgumentParser
import Braid

#if canImport(Glibc)
    import Glibc
#endif

extension DownloadArguments {
    /// Downloads one URL, showing progress on stderr, or writing JSON events on stdout with `--json`.
    func runSingle(_ url: String) async throws {
        var options = sharedOptions
        if let output { options.destination = .file(output) }
        options.expectedDigest = try checksum.map { try ExpectedDigest(checksumArgument: $0) }
        // One download: the overall limit is simply another limit on it.
        if let overall = maxOverallLimit?.bytesPerSecond {
            options.rateLimit = min(options.rateLimit ?? overall, overall)
        }
        let download = Download(url: url, options: options)
        let signals = SignalTrap { download.interrupt() }
        defer { signals.cancel() }

        let failure: BraidError?
        if json {
            let writer = JSONEventWriter(inList: false, progressInterval: .seconds(progressInterval))
            if request.insecure { writer.notice("warning: --insecure: TLS certificates are not verified") }
            let outcome = await DownloadOutcome.run(
                download,
                as: DownloadItem(id: 1, url: url, output: nil),
                reportingTo: writer
            )
            failure = outcome.error
            if let failure { StandardStreams.error("braid: \(failure.commandLineMessage())\n") }
        } else {
            let reporter = ProgressReporter(quiet: quiet)
            if request.insecure && !quiet {
                reporter.warn("warning: --insecure: TLS certificates are not verified")
            }
            let reporting = Task { [events = download.events] in
                for await event in events { reporter.handle(event) }
            }
            do {
                _ = try await download.run()
                failure = nil
            } catch {
                failure = error
            }
            await reporting.value
            if let failure { reporter.fail(failure) }
        }
        guard let failure else { return }
        if failure.code == .interrupted, signals.caughtSignal == SIGTERM {
            throw ExitCode(128 + SIGTERM)
        }
        throw ExitCode(ExitStatus(failure.code).rawValue)
    }
}
