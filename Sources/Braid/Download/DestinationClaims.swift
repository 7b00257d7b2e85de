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
///
/// A download's own files beside its file (`FILE.part`, `FILE.braid` and the manifest's temporaries:
/// `DestinationPaths.ownSuffixes`) are claimed with it: a download whose final path is one of them is refused, and so
/// is one whose own files another's final path would be. Either way, one would take the other's file for its own
/// partial data or manifest: resume from it, or remove it as stale.
final class DestinationClaims: Sendable {
    private struct Claims {
        /// Final path → the URL that claimed it and how to name that download in a message.
        var byPath: [[UInt8]: (url: String, label: String)] = [:]
        /// How many of them end as a download's own files do: only then may a new claim's own files be taken.
        var endingAsOwnFiles = 0
    }

    private let claims = Mutex(Claims())
    /// Reserved path → what keeps it.
    private let reserved = Mutex<[[UInt8]: String]>([:])

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
    /// already (saying how, when it is that one's own file or that one's path is this one's), or what keeps it when
    /// it is reserved, or nil once the claim is made.
    func claim(_ path: FilePath, for url: String, by label: String) -> String? {
        if let owner = reservation(of: path) { return owner }
        let key = Self.key(path)
        let ownSuffix = DestinationPaths.ownSuffix(ofBytes: key)
        return claims.withLock { claims in
            if let holder = claims.byPath[key], holder.url != url { return holder.label }
            // The download whose own file this path is, and those whose final paths are this one's own files.
            if let ownSuffix,
                let holder = claims.byPath[Array(key.dropLast(ownSuffix.utf8.count))]
            {
                return "\(holder.label), as its \(ownSuffix) file"
            }
            if claims.endingAsOwnFiles > 0 {
                for suffix in DestinationPaths.ownSuffixes {
                    if let holder = claims.byPath[key + Array(suffix.utf8)] {
                        return "\(holder.label), whose file would be this one's \(suffix) file"
                    }
                }
            }
            if claims.byPath.updateValue((url, label), forKey: key) == nil, ownSuffix != nil {
                claims.endingAsOwnFiles += 1
            }
            return nil
        }
    }

    /// Gives up every path `url` claimed as `label`: another download may then claim them, and finds whatever is
    /// left there (a finished file, the partial files of a removed download) as files already there, by the usual
    /// rules.
    func release(for url: String, by label: String) {
        claims.withLock { claims in
            for (key, holder) in claims.byPath where holder.url == url && holder.label == label {
                claims.byPath[key] = nil
                if DestinationPaths.ownSuffix(ofBytes: key) != nil { claims.endingAsOwnFiles -= 1 }
            }
        }
    }

    /// Whether a download claimed `path` already: its files may be there, made after the directory was listed.
    func isClaimed(_ path: FilePath) -> Bool {
        let key = Self.key(path)
        return claims.withLock { $0.byPath[key] != nil }
    }

    /// The path's bytes, normalised: paths are compared as the file system compares names, byte for byte (`café`
    /// with a combining accent is another file than `café` with an accented letter, though Swift's strings are
    /// equal).
    private static func key(_ path: FilePath) -> [UInt8] { Array(path.lexicallyNormalized().string.utf8) }
}
