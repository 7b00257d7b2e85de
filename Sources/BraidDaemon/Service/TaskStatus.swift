/// Where a daemon download is, in aria2's words (its `status` field), which clients show and filter on.
///
/// - `waiting` → `active` when a slot is free; `waiting` → `paused` → `waiting` on pause and unpause;
/// - `active` → `paused` (its transfer is interrupted, progress saved), `complete`, `error` or `removed`;
/// - `waiting` or `paused` → `removed`;
/// - `complete`, `error` and `removed` are stopped: the download is listed until its result is removed.
public enum TaskStatus: String, Sendable, Codable, CaseIterable {
    case active, waiting, paused, error, complete, removed

    /// Whether the download has ended and is only listed (aria2's `tellStopped`).
    public var isStopped: Bool { self == .complete || self == .error || self == .removed }
}
