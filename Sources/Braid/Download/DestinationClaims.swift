import Synchronization
import SystemPackage

/// The final paths the running downloads of one `DownloadManager` will write, so that two of them whose names the
/// servers chose alike (the same last path component or `Content-Disposition`) do not race for one file, and the
/// paths the program keeps for itself (a daemon's session file), which no download may write at all.
///
/// A download claims its path when it resolves its destination, and the claim lasts as long as the manager: a
/// second URL that finds the name taken is refused even after the first has finished, since the file there is the
/// first one's and must not be taken (or skipped as complete) for the second's. The same URL may claim its path
/// again, as a retry does. The lock on `FILE.part` would also keep a concurrent second one out, but only with a
/// message about a busy file; this says which other download took the name.
final class DestinationClaims: Sendable {
    /// Final path → the URL that claimed it and how to name that download in a message.
    private let claims = Mutex<[String: (url: String, label: String)]>([:])
    /// Reserved path → what keeps it.
    private let reserved = Mutex<[String: String]>([:])

    /// Keeps `path` from every download: none may have it as its final path or write any of its own files there.
    func reserve(_ path: FilePath, for owner: String) {
        reserved.withLock { $0[Self.key(path)] = owner }
    }

    /// What keeps a file that a download to `final` would write (the file itself, `FILE.part`, `FILE.braid` and
    /// the manifest's temporary and reserve files); nil when it may write them all.
    func reservation(of final: FilePath) -> String? {
        // Most managers reserve nothing: no path to work out for each of a list's thousands of downloads.
        guard !reserved.withLock({ $0.isEmpty }) else { return nil }
        let paths = DestinationPaths(final: AnchoredPath(final))
        let store = ManifestStore(path: paths.manifest)
        let written = [paths.final, paths.part, paths.manifest, store.temporaryPath, store.reservePath]
        let keys = written.map { Self.key($0.path) }
        return reserved.withLock { reserved in keys.compactMap { reserved[$0] }.first }
    }

    /// Claims `path` for `url`, a download called `label`; returns the label of another download that holds it
    /// already, or what keeps it when it is reserved, or nil once the claim is made.
    func claim(_ path: FilePath, for url: String, by label: String) -> String? {
        if let owner = reservation(of: path) { return owner }
        let key = Self.key(path)
        return claims.withLock { claims in
            if let holder = claims[key], holder.url != url { return holder.label }
            claims[key] = (url, label)
            return nil
        }
    }

    /// Whether a download claimed `path` already: its files may be there, made after the directory was listed.
    func isClaimed(_ path: FilePath) -> Bool {
        let key = Self.key(path)
        return claims.withLock { $0[key] != nil }
    }

    private static func key(_ path: FilePath) -> String { path.lexicallyNormalized().string }
}
