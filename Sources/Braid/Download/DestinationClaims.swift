import Synchronization
import SystemPackage

/// The final paths the running downloads of one `DownloadManager` will write, so that two of them whose names the
/// servers chose alike (the same last path component or `Content-Disposition`) do not race for one file.
///
/// A download claims its path when it resolves its destination and releases it when that attempt ends. The lock
/// on `FILE.part` would also keep the second one out, but only with a message about a busy file; this says which
/// other download took the name.
final class DestinationClaims: Sendable {
    /// Final path → the label of the download that claimed it.
    private let claims = Mutex<[String: String]>([:])

    /// Claims `path` for the download called `label`; returns the label of the download that holds it already,
    /// or nil once the claim is made.
    func claim(_ path: FilePath, by label: String) -> String? {
        let key = path.lexicallyNormalized().string
        return claims.withLock { claims in
            if let holder = claims[key] { return holder }
            claims[key] = label
            return nil
        }
    }

    func release(_ path: FilePath) {
        let key = path.lexicallyNormalized().string
        _ = claims.withLock { $0.removeValue(forKey: key) }
    }
}
