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
    /// The directory a destination's file goes into.
    static func directory(of destination: DownloadOptions.Destination) -> FilePath {
        switch destination {
        case let .file(path):
            let parent = FilePath(path).removingLastComponent()
            return parent.isEmpty ? FilePath(".") : parent
        case let .directory(path):
            return FilePath(path)
        }
    }

    /// Checks, before any traffic, that the destination can be written: an output path is not a directory, and
    /// its directory exists and is writable, or can be created (its nearest existing ancestor is a writable
    /// directory), as `aria2c -d` and `wget -P` create theirs.
    static func checkDestination(_ destination: DownloadOptions.Destination) throws(BraidError) {
        if case let .file(path) = destination, (try? FilePath(path).stat())?.type == .directory {
            throw BraidError(.usage, "the output path '\(path)' is a directory", remedies: [.saveIntoDirectory])
        }
        var directory = directory(of: destination)
        while true {
            let status: Stat
            do {
                status = try directory.stat()
            } catch .noSuchFileOrDirectory
                where directory != FilePath(".") && directory.removingLastComponent() != directory
            {
                // Missing: it will be created, if its parent (the working directory, for a relative name) can hold it.
                let parent = directory.removingLastComponent()
                directory = parent.isEmpty ? FilePath(".") : parent
                continue
            } catch {
                throw .localIO("cannot use the directory '\(directory)'", error)
            }
            guard status.type == .directory else { throw .localIO("'\(directory)' is not a directory") }
            break
        }
        do {
            try directory.checkWriteAndSearchAccess()
        } catch {
            throw .localIO("the directory '\(directory)' is not writable", error)
        }
    }

    /// Creates the destination's directory and its missing parents, with the permissions any new directory gets.
    static func createDirectory(of destination: DownloadOptions.Destination) throws(BraidError) {
        let directory = directory(of: destination)
        var missing: [FilePath] = []
        var current = directory
        while !current.isEmpty, (try? current.stat()) == nil {
            missing.append(current)
            current = current.removingLastComponent()
        }
        for path in missing.reversed() {
            do {
                try path.makeDirectory()
            } catch .fileExists {
                // Created meanwhile by another download into the same directory.
                continue
            } catch {
                throw .localIO("cannot create the directory '\(path)'", error)
            }
        }
    }

    /// Whether anything is at `path`, without following a link: a dangling link exists.
    func exists(_ path: FilePath) -> Bool { Self.exists(path) }

    static func exists(_ path: FilePath) -> Bool {
        (try? path.stat(followTargetSymlink: false)) != nil
    }

    static func isSymbolicLink(_ path: FilePath) -> Bool {
        (try? path.stat(followTargetSymlink: false))?.type == .symbolicLink
    }

    /// Refuses a link planted at any of Braid's own names, before any of them is opened or created.
    func refuseLinks() throws(BraidError) {
        let store = ManifestStore(path: manifest)
        for path in [part, manifest, store.temporaryPath, store.reservePath] where Self.isSymbolicLink(path) {
            throw .symbolicLink(path)
        }
    }

    /// Renames the finished partial file to the final name. Without `replacing`, a file that appeared at the final
    /// name meanwhile is kept and the rename fails with `.fileExists`.
    func moveIntoPlace(replacing: Bool) throws(BraidError) {
        do {
            try Self.rename(part, to: final, replacing: replacing)
        } catch .fileExists {
            throw BraidError(
                .fileExists,
                "\(final) appeared while downloading and was left alone; the downloaded data is kept in \(part): "
                    + "move the other file away and run the same command again",
                remedies: [.overwrite],
                cause: .errno(.fileExists)
            )
        } catch {
            throw .localIO("cannot rename \(part) to \(final)", error)
        }
    }

    /// Renames `source` to `target`. Without `replacing`, a file at `target` is never replaced (`.fileExists`):
    /// atomically with renameat2's RENAME_NOREPLACE; where the file system lacks it, with link(2), which never
    /// replaces; where it has no hard links either, with a check just before a plain rename (a race of
    /// microseconds instead of a whole download).
    static func rename(_ source: FilePath, to target: FilePath, replacing: Bool) throws(Errno) {
        guard !replacing else { return try source.rename(to: target, replacing: true) }
        do {
            try source.rename(to: target, replacing: false)
        } catch .invalidArgument, .noFunction {
            do {
                try source.link(at: target)
                try? source.unlink()
            } catch .notPermitted, .notSupported {
                guard !exists(target) else { throw .fileExists }
                try source.rename(to: target, replacing: true)
            }
        }
    }

    /// The permissions a new file gets, as curl and wget give them: 0666 without the process's umask. The umask is
    /// read from /proc/self/status, since umask(2) can only be read by setting it, which races with other threads.
    static var permissionsForNewFiles: mode_t {
        let fallback: mode_t = 0o022
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
            let mask = mode_t(String(line.dropFirst("Umask:".count).filter { !$0.isWhitespace }), radix: 8)
        else { return 0o666 & ~fallback }
        return 0o666 & ~mask
    }

    /// The size of a file, or nil if it does not exist.
    static func size(of path: FilePath) -> Int64? {
        try? path.stat().size
    }

    func removeDownloadState() {
        try? part.unlink()
        ManifestStore(path: manifest).remove()
    }
}
