import Synchronization
import SystemPackage

/// The final paths the running downloads of one `DownloadManager` will write, so that two of them whose names the
/// servers chose alike (the same last path component or `Content-Disposition`) do not race for one file.
///
/// A download claims its path when it resolves its destination, and the claim lasts as long as the manager: a
/// second URL that finds the name taken is refused even after the first has finished, since the file there is the
/// first one's and must not be taken (or skipped as complete) for the second's. The same URL may claim its path
/// again, as a retry does. The lock on `FILE.part` would also keep a concurrent second one out, but only with a
/// message about a busy file; this says which other download took the name.
final class DestinationClaims: Sendable {
    /// Final path → the URL that claimed it and how to name that download in a message.
    private let claims = Mutex<[String: (url: String, label: String)]>([:])

    /// Claims `path` for `url`, a download called `label`; returns the label of another download that holds it
    /// already, or nil once the claim is made.
    func claim(_ path: FilePath, for url: String, by label: String) -> String? {
        let key = path.lexicallyNormalized().string
        return claims.withLock { claims in
            if let holder = claims[key], holder.url != url { return holder.label }
            claims[key] = (url, label)
            return nil
        }
    }
}
