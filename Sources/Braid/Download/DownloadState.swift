/// Where a download is in its life. Every download goes through the same states:
/// `queued` → `probing` → `downloading` ⇄ `paused` → `verifying` → `completed`, or ends `failed` or `cancelled`.
public enum DownloadState: String, Sendable, Codable, CaseIterable {
    case queued, probing, downloading, paused, verifying, completed, failed, cancelled

    /// Whether the download has ended, one way or another.
    public var isFinal: Bool { self == .completed || self == .failed || self == .cancelled }
}
