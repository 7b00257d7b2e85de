extension DownloadManager {
    /// What a manager's downloads report, in one stream (`DownloadManager.events`). The events of one download
    /// come in order: `running`, then what it reports, then `finished`, its last (a download that never starts
    /// has no `running`); those of different downloads interleave.
    public enum Event: Sendable {
        /// The manager gave the download a slot: it starts now, or a paused one goes on.
        case running(Download)
        /// The download reported this: its state, progress, notices, retries, its start and its result (see
        /// `DownloadEvent`). A manager holding a download before it starts reports `.state(.paused)`, and
        /// `.state(.queued)` when it lines it up again.
        case reported(Download, DownloadEvent)
        /// The download ended, one way or another; nothing more comes of it. One that never started ends with
        /// `.cancelled`, or `.interrupted` ("interrupted before it started") after `interruptAll()`.
        case finished(Download, Result<DownloadResult, BraidError>)

        /// Which download the event is about.
        public var download: Download {
            switch self {
            case let .running(download), let .reported(download, _), let .finished(download, _): download
            }
        }
    }
}

extension DownloadManager.Event: CoalescingEvent {
    var source: ObjectIdentifier { download.id }

    var isSnapshot: Bool {
        if case .reported(_, .progress) = self { return true }
        return false
    }
}
