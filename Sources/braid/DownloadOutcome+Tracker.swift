import Braid

extension DownloadOutcome {
    /// What a download's events say that its outcome needs: where the file went (the result's path once it
    /// completed), whether a transfer started, and the server's `Content-Type`.
    struct Tracker {
        private var path: String?
        private var started = false
        private var contentType: String?

        mutating func note(_ event: DownloadEvent) {
            switch event {
            case let .started(resource, startedPath, _):
                path = startedPath
                started = true
                contentType = resource.contentType
            default:
                break
            }
        }

        /// The outcome of the download `item` that ended with `result` after `seconds` in this run.
        func outcome(of item: DownloadItem, _ result: Result<DownloadResult, BraidError>, seconds: Double)
            -> DownloadOutcome
        {
            DownloadOutcome(
                item: item,
                path: (try? result.get())?.path ?? path,
                result: result,
                // Only an existing file verified in place, or one as new as the server's, completes without ever
                // starting a transfer.
                skipped: !started && (try? result.get()) != nil,
                seconds: seconds,
                contentType: contentType
            )
        }
    }
}
