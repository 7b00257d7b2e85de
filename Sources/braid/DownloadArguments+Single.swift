import ArgumentParser
import Braid
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension DownloadArguments {
    /// Downloads one URL, showing progress on stderr, or writing JSON events on stdout with `--json`. When it is a
    /// Metalink document (its `Content-Type` is `application/metalink4+xml`, or `--metalink` says so), the
    /// document is kept and the files it describes are downloaded next.
    func runSingle(_ url: String) async throws {
        var options = sharedOptions
        // With --metalink, -o and --checksum are about the file the document describes, not the document.
        if !metalink {
            if let output { options.destination = .file(output) }
            options.expectedDigest = try checksum.map { try ExpectedDigest(checksumArgument: $0) }
            applyStream(to: &options)
        }
        let document = try await runOne(url, options: options, as: DownloadItem(id: 1, url: url, output: nil))
        if options.stream == nil && (metalink || Metalink.isMetalink(contentType: document.contentType)) {
            try await runMetalink(readingAt: document.path, from: .served(for: url), ownsOutput: metalink)
        }
    }

    /// Runs one download and returns where the file is and the server's `Content-Type` for it; a failure is
    /// reported and thrown as the exit status, after `explain` has said it better if it can (an object store's
    /// reason for a refusal).
    func runOne(
        _ url: String, options base: DownloadOptions, as item: DownloadItem,
        explain: @Sendable (BraidError) async -> BraidError = { $0 }
    ) async throws -> (path: String, contentType: String?) {
        var options = base
        // One download: the overall limit is simply another limit on it.
        if let overall = maxOverallLimit?.bytesPerSecond {
            options.rateLimit = min(options.rateLimit ?? overall, overall)
        }
        let download = Download(url: url, options: options)
        let signals = SignalTrap { download.interrupt() }
        defer { signals.cancel() }

        let failure: BraidError?
        var finished: (path: String, contentType: String?)?
        let refusedEntries = Mutex(0)
        if json {
            let writer = JSONEventWriter(inList: false, progressInterval: .seconds(progressInterval))
            if request.insecure { writer.notice("warning: --insecure: TLS certificates are not verified") }
            let outcome = await DownloadOutcome.run(download, as: item, reportingTo: writer)
            if let error = outcome.error { failure = await explain(error) } else { failure = nil }
            if case let .success(result) = outcome.result {
                finished = (result.path, outcome.contentType)
                refusedEntries.withLock { $0 = result.extraction?.refused.count ?? 0 }
            }
            if let failure { StandardStreams.error("braid: \(failure.commandLineMessage())\n") }
        } else {
            let reporter = ProgressReporter(quiet: quiet)
            if request.insecure && !quiet {
                reporter.warn("warning: --insecure: TLS certificates are not verified")
            }
            let reporting = Task { [events = download.events] in
                var contentType: String?
                for await event in events {
                    if case let .started(resource, _, _) = event { contentType = resource.contentType }
                    if case let .completed(result) = event {
                        refusedEntries.withLock { $0 = result.extraction?.refused.count ?? 0 }
                    }
                    reporter.handle(event)
                }
                return contentType
            }
            do {
                let result = try await download.run()
                finished = (result.path, nil)
                failure = nil
            } catch {
                failure = await explain(error)
            }
            let contentType = await reporting.value
            finished?.contentType = contentType
            if let failure { reporter.fail(failure) }
        }
        guard let failure else {
            guard let finished else { preconditionFailure("Invalid state: a download succeeded with no path") }
            let refused = refusedEntries.withLock { $0 }
            if refused > 0 {
                StandardStreams.error("braid: \(refused) entries of the archive were refused (see above)\n")
                throw ExitCode(ExitStatus.failure.rawValue)
            }
            return finished
        }
        if failure.code == .interrupted, signals.caughtSignal == SIGTERM {
            throw ExitCode(128 + SIGTERM)
        }
        throw ExitCode(ExitStatus(failure.code).rawValue)
    }
}
