import Braid

/// How one download of a `braid` run ended, for the `done` or `error` event; a list's summary keeps less of it
/// (`Summary`).
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

    /// What the list's summary keeps of this outcome.
    var summary: Summary {
        let ending: Summary.Ending =
            switch result {
            case let .success(result) where skipped: .skipped(bytes: result.bytes, unmodified: result.unmodified)
            case let .success(result):
                .completed(bytes: result.bytes, resumedBytes: result.resumedBytes, verification: result.verification)
            case let .failure(error): .failed(error)
            }
        return Summary(item: item, path: path, seconds: seconds, ending: ending)
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

extension DownloadOutcome {
    /// What a list keeps of a download's outcome for its summary (`ListObserver.listFinished`), once the outcome
    /// was reported: the few figures the summary's table and JSON show, about 100 bytes where the outcome, with the
    /// whole `DownloadResult`, takes 288. A list keeps one for each of its entries to its end.
    struct Summary: Sendable {
        let item: DownloadItem
        /// The final path, once the download chose it.
        let path: String?
        /// Wall time of the download in this run.
        let seconds: Double
        let ending: Ending

        enum Ending: Sendable {
            /// Fetched, `resumedBytes` of its `bytes` left by an earlier run, and checked as `verification` says
            /// (`DownloadResult.verification`).
            case completed(bytes: Int64, resumedBytes: Int64, verification: String)
            /// Already complete and verified, or (`unmodified`, with `-N`) as new as the server's: nothing fetched.
            case skipped(bytes: Int64, unmodified: Bool)
            /// Boxed: an error takes more room than the other two cases, and few downloads fail.
            indirect case failed(BraidError)
        }

        var error: BraidError? {
            if case let .failed(error) = ending { return error }
            return nil
        }

        /// The file's length, once it completed or was skipped.
        var bytes: Int64? {
            switch ending {
            case let .completed(bytes, _, _), let .skipped(bytes, _): bytes
            case .failed: nil
            }
        }

        /// The name to show: the final file's name when known, escaped for a terminal.
        var name: String { item.name(ofFileAt: path) }

        /// `completed`, `skipped`, `failed` or `interrupted`, as the summary reports it.
        var outcome: String {
            switch ending {
            case .completed: "completed"
            case .skipped: "skipped"
            case let .failed(error): error.code == .interrupted ? "interrupted" : "failed"
            }
        }
    }
}
