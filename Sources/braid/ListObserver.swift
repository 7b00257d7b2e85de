import Braid

/// What a list run reports, whether to a person (`ListReporter`) or to a program (`JSONEventWriter`).
///
/// Calls for one download arrive in order; those of a list's downloads interleave, from one task.
protocol ListObserver: Sendable {
    /// Something to say that is not about one download, such as the `--insecure` warning.
    func notice(_ message: String)
    /// The command cannot run at all, for example because the list is malformed.
    func failed(_ error: BraidError)
    /// The list is about to run.
    func listStarted(_ items: [DownloadItem], limits: DownloadManager.Limits, directory: String)
    /// Whether `handle` is given every event, states and results (`.state`, `.completed`) among them; without, only
    /// each download's start, progress, notices and retries, and the list's manager streams fewer events.
    var readsStates: Bool { get }
    /// A download reported `event`.
    func handle(_ event: DownloadEvent, of item: DownloadItem)
    /// A download ended; every event it reported has been handled.
    func finished(_ outcome: DownloadOutcome)
    /// Every download ended, with what the summary keeps of each outcome (`finished` had the outcome itself), in
    /// list order; `status` is the command's exit status.
    func listFinished(_ outcomes: [DownloadOutcome.Summary], status: Int32, seconds: Double)
}
