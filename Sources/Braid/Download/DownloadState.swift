/// Where a download is in its life:
/// - `queued` → `probing` → `downloading` → `verifying` → `completed`;
/// - `queued` → `paused` → `queued` when its `DownloadManager` holds it before it starts, and lets it wait again;
/// - `downloading` → `paused` → `probing` again when resumed (the server is probed anew before going on);
/// - `downloading` → `probing` when the download restarts (the remote file changed, ranges turned out ignored);
/// - a file already complete at the destination goes `probing` → `verifying` → `completed`, and one as new as the
///   server's (`DownloadOptions.timestamping`) `probing` → `completed`;
/// - from any state but `completed`, it may end `failed` or `cancelled` (also one that never started).
public enum DownloadState: String, Sendable, Codable, CaseIterable {
    case queued, probing, downloading, paused, verifying, completed, failed, cancelled

    /// Whether the download has ended, one way or another.
    public var isFinal: Bool { self == .completed || self == .failed || self == .cancelled }

    /// The state a download that `error` ended ends in: `cancelled` when it was cancelled, else `failed`.
    init(endedBy error: BraidError) {
        self = error.code == .cancelled ? .cancelled : .failed
    }
}
