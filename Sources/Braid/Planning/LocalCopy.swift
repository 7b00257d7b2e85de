import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// The file already at the destination when a download with `DownloadOptions.timestamping` starts, and how it
/// compares with the server's (as `wget -N` compares them).
struct LocalCopy: Sendable, Equatable {
    var path: FilePath
    /// The modification time in whole seconds since 1970: HTTP dates have no fractions.
    var modified: Int64
    var size: Int64

    /// How the server's file compares with the local copy.
    enum Freshness: Equatable, Sendable {
        /// Its `Last-Modified` is not newer and its length (when known) is the same: nothing to fetch.
        case upToDate
        /// Its `Last-Modified` is newer.
        case serverNewer
        /// Its `Last-Modified` is not newer, but its length differs (as wget, the file is fetched again).
        case sizeDiffers
        /// It has no `Last-Modified` (or one that is not an HTTP date): nothing to compare, so it is fetched.
        case undated
    }

    /// The regular file at `path`, if there is one; a link or a directory is not compared but left to the checks
    /// every download makes.
    static func at(_ path: AnchoredPath) -> LocalCopy? {
        guard let status = try? path.status(), status.type == .regular else { return nil }
        return LocalCopy(path: path.path, modified: Int64(status.st_mtim.tv_sec), size: status.size)
    }

    /// The header that asks the server to answer `304 Not Modified` unless its file is newer. Braid keeps no
    /// entity tag of a finished file, so there is no `If-None-Match`.
    var conditionalHeaders: [String] {
        ["If-Modified-Since: \(HTTPDate.format(secondsSince1970: modified))"]
    }

    /// The server's file, as a probe that was answered with it (not `304`) found it, against this copy; `wallClock`
    /// (seconds since 1970) places a two-digit year.
    func freshness(of resource: RemoteResource, wallClock: Double) -> Freshness {
        guard let remote = resource.lastModified.flatMap({ HTTPDate.parse($0, wallClock: wallClock) }) else {
            return .undated
        }
        guard Int64(remote) <= modified else { return .serverNewer }
        guard resource.length == nil || resource.length == size else { return .sizeDiffers }
        return .upToDate
    }
}
