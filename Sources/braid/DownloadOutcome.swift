import Braid

/// How one download of a `braid` run ended, for the `done` or `error` event and the summary.
struct DownloadOutcome: Sendable {
    let item: DownloadItem
    /// The final path, once the download chose it.
    let path: String?
    let result: Result<DownloadResult, BraidError>
    /// Whether the file was already complete and verified, or (with `-N`) as new as the server's, so nothing was
    /// fetched.
    let skipped: Bool
    /// Wall time of this download in this run.
    let seconds: Double
    /// The server's `Content-Type` for the file, when the download probed it.
    var contentType: String? = nil

    var error: BraidError? {
        if case let .failure(error) = result { return error }
        return nil
    }

    /// The name to show: the final file's name when known, escaped for a terminal.
    var name: String { item.name(ofFileAt: path) }

    /// Why a skipped download was skipped, as the list's lines and table say it.
    var skipReason: String {
        (try? result.get())?.unmodified == true ? "up to date" : "already complete"
    }

    /// `completed`, `skipped`, `failed` or `interrupted`, as the summary reports it.
    var outcome: String {
        switch result {
        case .success: return skipped ? "skipped" : "completed"
        case let .failure(error): return error.code == .interrupted ? "interrupted" : "failed"
        }
    }

    /// Runs `download`, handing each of its events to `observer` in order, then the outcome.
    static func run(
        _ download: Download,
        as item: DownloadItem,
        reportingTo observer: any ListObserver
    ) async -> DownloadOutcome {
        let clock = ContinuousClock()
        let start = clock.now
        let reporting = Task { [events = download.events] in
            var tracker = Tracker()
            for await event in events {
                tracker.note(event)
                observer.handle(event, of: item)
            }
            return tracker
        }
        let result: Result<DownloadResult, BraidError>
        do {
            result = .success(try await download.run())
        } catch {
            result = .failure(error)
        }
        let outcome = await reporting.value.outcome(of: item, result, seconds: (clock.now - start).seconds)
        observer.finished(outcome)
        return outcome
    }
}
