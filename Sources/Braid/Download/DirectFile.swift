import Synchronization

/// A file of a manager's list that may need no `Download` of its own: its first GET, on its lane's pool thread,
/// reads it whole, and it is checked and named there (`DirectRequest`), with no job, partial file, manifest or event
/// stream. A list of ten thousand small files spent more on those layers than on the requests themselves: see
/// [the many-downloads note](../../../docs/design/many-downloads.md#direct-files).
///
/// Only a file that the GET read whole and that naming is all that is left of ends there. Anything else is handed
/// over to a `Download`: from where the GET got to (a redirect it may not follow, an error status, a failure to
/// retry, a file too long to read whole, a digest that fails, a name the server gives), as a download started on the
/// pool goes on from its start, so that no request is made twice; or from the start, with nothing asked, when a
/// check before the request fails or something of an earlier download is at the destination. The full path stays
/// the one owner of every rule a direct file does not run.
///
/// Made by `DownloadManager.makeSubmission`, which decides (`accepts`); submitted with `DownloadManager.submit`.
package final class DirectFile: Sendable {
    package let url: String
    package let options: DownloadOptions
    /// Names the file in messages and in another download's claim of its path, such as `line 3` of a list.
    package let label: String
    /// The caller's number for it, such as its place in a list.
    package let tag: Int
    /// Where the user's credentials may go (`DownloadJob.scope(of:options:)`), worked out once: its parse of the URL
    /// gives the manager's queue the host too (`CredentialScope.origin(of:)`).
    let credentials: CredentialScope
    /// Told what the file reports and how it ended, on the thread that has it (a pool's, whose other requests wait
    /// for it to return): any number of `.reported`, then one end.
    let onReport: @Sendable (DirectFile, Report) -> Void
    /// A stop asked for from any thread (`stop(_:)`), as a `Stop`'s raw value; 0 for none.
    private let stopping = Atomic<UInt8>(0)
    /// Whether it was submitted: a file runs once.
    private let submitted = Atomic<Bool>(false)

    /// What a direct file reports: the events of a body that comes in several pieces, as they come, then how it
    /// ended. Its events are all of them, states and results too: a caller shows those the manager's stream would
    /// carry (`DownloadManager.streams`).
    package enum Report: Sendable {
        /// Events reported as the body came (its start, its progress), before its end: none of them again at the
        /// end.
        case reported([DownloadEvent])
        /// Fetched, checked and named, with the events a `Download` of it would have reported, in order (those not
        /// reported before).
        case completed(DownloadResult, events: [DownloadEvent])
        /// Stopped (interrupted or cancelled), before it started or while its request ran, or written but not named
        /// (`NamingQueue`: its flush failed, or its name was taken meanwhile): nothing is left of it. `events` are
        /// those a `Download` that ended so would have reported.
        case stopped(BraidError, events: [DownloadEvent])
        /// Goes on as `download`, having reported `events`: the download's own events and its outcome come on the
        /// manager's `events`, and this file reports nothing more.
        case handedOver(Download, events: [DownloadEvent])
    }

    enum Stop: UInt8 {
        case interrupted = 1
        case cancelled = 2

        /// What a download stopped so before anything of it was written says (`DownloadJob.stop`).
        var error: BraidError {
            switch self {
            case .interrupted: DownloadJob.stop(.interrupted, paths: nil)
            case .cancelled: DownloadJob.stop(.cancelled(removingPartialFile: false), paths: nil)
            }
        }
    }

    init(
        url: String, options: DownloadOptions, label: String, tag: Int,
        onReport: @escaping @Sendable (DirectFile, Report) -> Void
    ) {
        self.url = url
        self.options = options
        self.label = label
        self.tag = tag
        self.onReport = onReport
        credentials = DownloadJob.scope(of: url, options: options)
    }

    /// Whether a manager's download of `url` with `options` may go as a direct file: one that starts on its lane's
    /// pool thread (`DownloadJob.startsOnPool`: read whole, over HTTP or HTTPS, afresh, with no mirrors), into a
    /// directory, not replacing a file, and with no length to hold it to (`expectedLength`, which the full path
    /// checks, `DownloadJob.attempt`). A name the server gives hands it over once it is known (`DirectRequest`).
    static func accepts(url: String, options: DownloadOptions, limiter: RateLimiter?) -> Bool {
        guard DownloadJob.startsOnPool(url: url, options: options, limiter: limiter), !options.overwrite,
            options.expectedLength == nil
        else {
            return false
        }
        switch options.destination {
        case .below, .directory: return true
        case .file: return false
        }
    }

    /// Marks the file submitted; false when it was already.
    func claim() -> Bool {
        !submitted.exchange(true, ordering: .relaxed)
    }

    /// Asks the file to stop, from any thread: its request, if it runs, ends soon with `stop`'s error (a pool's
    /// request looks for a stop several times a second, `PoolRequest`).
    func stop(_ stop: Stop) {
        _ = stopping.compareExchange(expected: 0, desired: stop.rawValue, ordering: .relaxed)
    }

    /// The stop asked for, if any.
    var stopAsked: Stop? { Stop(rawValue: stopping.load(ordering: .relaxed)) }
}
