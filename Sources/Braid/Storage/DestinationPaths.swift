import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// The three files of a download: the final name, `FILE.part` with the data, `FILE.braid` with the progress.
struct DestinationPaths: Sendable, Equatable {
    let final: FilePath
    var part: FilePath { FilePath(final.string + ".part") }
    var manifest: FilePath { FilePath(final.string + ".braid") }

    /// Resolves the destination: an explicit file, or a name chosen inside a directory. A name that comes from the
    /// server or the URL is reduced to one path component, so it cannot leave the directory.
    static func resolve(
        _ destination: DownloadOptions.Destination,
        suggestedFilename: String?,
        url: String
    ) -> DestinationPaths {
        switch destination {
        case let .file(path):
            return DestinationPaths(final: FilePath(path))
        case let .directory(directory):
            let name = suggestedFilename.flatMap(ContentDisposition.sanitise) ?? filename(fromURL: url) ?? "download"
            return DestinationPaths(final: FilePath(directory).appending(name))
        }
    }

    /// The last path component of a URL, percent-decoded and sanitised.
    static func filename(fromURL url: String) -> String? {
        guard let components = URLComponents(string: url) else { return nil }
        let last = components.path.split(separator: "/").last.map(String.init) ?? ""
        return ContentDisposition.sanitise(ContentDisposition.percentDecoded(last) ?? last)
    }

    /// Checks, before any traffic, that the directory the file goes into exists and can be written.
    static func checkWritableDirectory(for destination: DownloadOptions.Destination) throws(BraidError) {
        let directory: String
        switch destination {
        case let .file(path):
            let parent = FilePath(path).removingLastComponent().string
            directory = parent.isEmpty ? "." : parent
        case let .directory(path):
            directory = path
        }
        var status = stat()
        guard stat(directory, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw .localIO("the directory '\(directory)' does not exist")
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw .localIO("the directory '\(directory)' is not writable")
        }
    }

    func exists(_ path: FilePath) -> Bool { access(path.string, F_OK) == 0 }

    /// The size of a file, or nil if it does not exist.
    static func size(of path: FilePath) -> Int64? {
        var status = stat()
        guard stat(path.string, &status) == 0 else { return nil }
        return Int64(status.st_size)
    }

    func removeDownloadState() {
        unlink(part.string)
        ManifestStore(path: manifest).remove()
    }
}
