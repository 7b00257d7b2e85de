import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// The three files of a download, named in the directory they go in (see `AnchoredPath`): the final name,
/// `FILE.part` with the data, `FILE.braid` with the progress.
struct DestinationPaths: Sendable, Equatable {
    let final: AnchoredPath
    /// The final name's path as it is shown (`AnchoredPath.path`), worked out once: a download shows and claims it
    /// several times, and a list of many small files made it four times a file.
    let finalPath: FilePath

    init(final: AnchoredPath) {
        self.final = final
        finalPath = final.path
    }

    var part: AnchoredPath { final.appendingToName(Self.partSuffix) }
    var manifest: AnchoredPath { final.appendingToName(Self.manifestSuffix) }

    static let partSuffix = ".part"
    static let manifestSuffix = ".braid"
    /// What the names of the files a download keeps beside its file add to the file's name: its data (`FILE.part`),
    /// its manifest (`FILE.braid`), and the manifest's temporary and reserve files. A download takes any file there
    /// for its own state, so no other download may have one of these names (`DestinationClaims`), and no name from
    /// outside may end so (`SafeName`): a server that named a file `big.iso.braid` would otherwise plant the
    /// manifest a later download of `big.iso` resumes from.
    static let ownSuffixes = [
        partSuffix, manifestSuffix, manifestSuffix + StateFile.temporarySuffix,
        manifestSuffix + ManifestStore.reserveSuffix,
    ]

    /// The suffix of `ownSuffixes` that `name` ends in after something else, if any.
    static func ownSuffix(of name: String) -> String? {
        ownSuffix(ofBytes: name.utf8)
    }

    /// The suffix of `ownSuffixes` that a name's UTF-8 `bytes` end in after something else, if any: by bytes, as
    /// the file system compares names, and without Unicode's comparison for each of a list's files.
    static func ownSuffix<Bytes: BidirectionalCollection<UInt8>>(ofBytes bytes: Bytes) -> String? {
        ownSuffixes.first { suffix in
            bytes.count > suffix.utf8.count && bytes.suffix(suffix.utf8.count).elementsEqual(suffix.utf8)
        }
    }

    /// Where a destination's file goes, before anything is opened: the directory the user chose, the
    /// subdirectories below it that a document or a client named, and the file's name (nil while the server is to
    /// choose it).
    struct Place: Equatable, Sendable {
        var directory: FilePath
        var subdirectories: [SafeName] = []
        var name: String?

        /// The path below `directory` of the file `name` here (`sub/name`): the path a checksum file names it by.
        func pathBelowDirectory(name: String) -> String {
            (subdirectories.map(\.string) + [name]).joined(separator: "/")
        }

        /// The file's path, as it is shown.
        var path: FilePath {
            var path = directory
            for subdirectory in subdirectories { path.append(subdirectory.string) }
            return path.appending(name ?? "")
        }
    }

    /// The place of `destination`, its name nil when the server is to choose it. The names in a `.below`
    /// destination must be safe as they are (`SafeName`), else it is refused.
    static func place(of destination: DownloadOptions.Destination) throws(BraidError) -> Place {
        switch destination {
        case let .file(path):
            let path = FilePath(path)
            return Place(directory: path.removingLastComponent(), name: path.lastComponent?.string ?? path.string)
        case let .directory(directory):
            return Place(directory: FilePath(directory))
        case let .below(directory, subdirectory, name):
            var place = Place(directory: FilePath(directory))
            do throws(SafeName.Refusal) {
                if !subdirectory.isEmpty { place.subdirectories = try SafeName.path(validating: subdirectory) }
            } catch {
                throw .usage("the subdirectory '\(subdirectory)' \(error.reason)")
            }
            do throws(SafeName.Refusal) {
                place.name = try name.map { name throws(SafeName.Refusal) in try SafeName(validating: name).string }
            } catch {
                throw .usage("the file name '\(name ?? "")' \(error.reason)")
            }
            return place
        }
    }

    /// The place of `destination` with its name: where the destination leaves it to the server, the name the
    /// server proposed, else the URL's, made a safe name (`SafeName.lastComponent(of:)`), so it cannot leave the
    /// directory; "download" when neither gives one.
    static func resolve(
        _ destination: DownloadOptions.Destination,
        suggestedFilename: String?,
        url: String
    ) throws(BraidError) -> Place {
        try resolve(destination, suggestedFilename: suggestedFilename, nameFromURL: filename(fromURL: url))
    }

    /// `resolve(_:suggestedFilename:url:)` with the URL's name (`filename(fromURL:)`) given, for a caller that
    /// resolves the same URL's place often and works the name out once: parsing the URL costs more than the rest.
    static func resolve(
        _ destination: DownloadOptions.Destination,
        suggestedFilename: String?,
        nameFromURL: @autoclosure () -> String?
    ) throws(BraidError) -> Place {
        var place = try place(of: destination)
        if place.name == nil {
            place.name =
                suggestedFilename.flatMap { SafeName.lastComponent(of: $0)?.string } ?? nameFromURL() ?? "download"
        }
        return place
    }

    /// A destination looked at, at `place`, kept for a later step that resolves the same place.
    struct Opened: Sendable {
        let place: Place
        /// Its files, in its directory as opened; nil when a directory of the place was missing
        /// (`openIfPresent(_:known:)`): nothing of a download was there, and the step that writes makes them.
        let paths: DestinationPaths?
    }

    /// Opens the directory of `place`, making what is missing of it when `creating`, and names the files there.
    /// The user's directory is made and opened through links, as any program does; the subdirectories a document
    /// or a client named are opened below it without following any (`OpenDirectory.descend(into:creating:)`).
    ///
    /// - Parameters:
    ///   - synchronizing: whether each directory made is made durable in the one above as it is made, for a download
    ///     whose file is flushed: the file's name, durable in its directory, is lost with a directory that is not.
    ///   - known: the user's directories a manager's downloads opened already (`OpenDirectories`); the directory of
    ///     `place` is opened (and made) only when it is not among them.
    static func open(_ place: Place, creating: Bool, synchronizing: Bool = false, known: OpenDirectories? = nil)
        throws(BraidError) -> DestinationPaths
    {
        var directory: OpenDirectory
        if let opened = known?.opened(place.directory) {
            directory = opened
        } else {
            if creating { try createDirectory(place.directory, synchronizing: synchronizing) }
            do {
                directory = try OpenDirectory(opening: place.directory)
            } catch {
                let shown = place.directory.isEmpty ? "." : place.directory.string
                throw .localIO("cannot open the directory '\(shown)'", error)
            }
            directory = known?.keep(directory, at: place.directory) ?? directory
        }
        for subdirectory in place.subdirectories {
            let path = directory.path.appending(subdirectory.string)
            do {
                directory = try directory.descend(
                    into: subdirectory, creating: creating, synchronizing: synchronizing)
            } catch .tooManySymbolicLinkLevels {
                throw .symbolicLinkInPlace(path)
            } catch {
                throw .localIO("cannot \(creating ? "make" : "open") the directory '\(path)'", error)
            }
        }
        return DestinationPaths(final: AnchoredPath(place.name ?? "download", in: directory))
    }

    /// `open(_:creating:known:)` without making anything; nil when the place's directory, or one of the
    /// subdirectories below it, is missing, so that no file of a download can be there yet.
    static func openIfPresent(_ place: Place, known: OpenDirectories? = nil) throws(BraidError) -> DestinationPaths? {
        do {
            return try open(place, creating: false, known: known)
        } catch let error where error.cause?.errno == .noSuchFileOrDirectory {
            return nil
        }
    }

    /// The last path component of a URL, percent-decoded and made a safe name.
    static func filename(fromURL url: String) -> String? {
        URLComponents(string: url).flatMap(filename(from:))
    }

    /// The name a URL already parsed gives a file going to `destination`: none where the destination names the file
    /// itself (a list's `out=`), which then never works it out.
    static func nameFromURL(_ parsed: URLComponents?, for destination: DownloadOptions.Destination) -> String? {
        destination.namesFile ? nil : parsed.flatMap(filename(from:))
    }

    /// `filename(fromURL:)` of a URL already parsed.
    static func filename(from components: URLComponents) -> String? {
        // The last segment that is not empty, found from the end: a list asks for every file's.
        var path = Substring(components.path)
        while path.last == "/" { path.removeLast() }
        let last = String(path.lastIndex(of: "/").map { path[path.index(after: $0)...] } ?? path)
        return SafeName.lastComponent(of: ContentDisposition.percentDecoded(last) ?? last)?.string
    }

    /// The directory the user chose for a destination: the one its file goes into, or the one below which it does.
    static func directory(of destination: DownloadOptions.Destination) -> FilePath {
        switch destination {
        case let .file(path):
            let parent = FilePath(path).removingLastComponent()
            return parent.isEmpty ? FilePath(".") : parent
        case let .directory(path), let .below(path, _, _):
            return FilePath(path)
        }
    }

    /// Checks, before any traffic, that the destination can be written: an output path is not a directory, and
    /// its directory exists and is writable, or can be created (its nearest existing ancestor is a writable
    /// directory), as `aria2c -d` and `wget -P` create theirs.
    static func checkDestination(_ destination: DownloadOptions.Destination) throws(BraidError) {
        try checkDestination(destination, directory: { directory throws(BraidError) in try checkDirectory(directory) })
    }

    /// `checkDestination(_:)`, with the check of the user's directory (`checkDirectory`) made by `checkingDirectory`,
    /// which may have made it already for an earlier download into the same directory (`OpenDirectories`).
    static func checkDestination(
        _ destination: DownloadOptions.Destination,
        directory checkingDirectory: (FilePath) throws(BraidError) -> Void
    ) throws(BraidError) {
        if case let .file(path) = destination, (try? FilePath(path).stat())?.type == .directory {
            throw BraidError(.usage, "the output path '\(path)' is a directory", remedies: [.saveIntoDirectory])
        }
        _ = try place(of: destination)
        try checkingDirectory(directory(of: destination))
    }

    /// Checks that the user's directory exists and is writable, or can be created (its nearest existing ancestor is
    /// a writable directory).
    static func checkDirectory(_ userDirectory: FilePath) throws(BraidError) {
        var directory = userDirectory
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

    /// Creates the user's directory and its missing parents, with the permissions any new directory gets; through
    /// links, as `mkdir -p` does: the path is the user's own. With `synchronizing`, each one made is made durable in
    /// its parent (`OpenDirectory.descend(into:creating:synchronizing:)`).
    static func createDirectory(_ directory: FilePath, synchronizing: Bool = false) throws(BraidError) {
        var missing: [FilePath] = []
        var current = directory
        while !current.isEmpty, (try? current.stat()) == nil {
            missing.append(current)
            current = current.removingLastComponent()
        }
        for path in missing.reversed() {
            do {
                try path.makeDirectory()
                if synchronizing { StateFile.syncDirectory(of: path) }
            } catch .fileExists {
                // Created meanwhile by another download into the same directory.
                continue
            } catch {
                throw .localIO("cannot create the directory '\(path)'", error)
            }
        }
    }

    /// Whether anything is at `path`, without following a link: a dangling link exists.
    func exists(_ path: AnchoredPath) -> Bool { path.exists }

    /// Refuses a link planted at any of Braid's own names, before any of them is opened or created. Returns whether
    /// the manifest's names hold nothing, as `ManifestStore.init(path:knownAbsent:)` takes it.
    @discardableResult
    func refuseLinks() throws(BraidError) -> Bool {
        let store = ManifestStore(path: manifest)
        var manifestNamesEmpty = true
        for path in [part, manifest, store.temporaryPath, store.reservePath] {
            guard let status = try? path.status() else { continue }
            if status.type == .symbolicLink { throw .symbolicLink(path.path) }
            if path != part { manifestNamesEmpty = false }
        }
        return manifestNamesEmpty
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
    static func rename(_ source: AnchoredPath, to target: AnchoredPath, replacing: Bool) throws(Errno) {
        guard !replacing else { return try source.rename(to: target, replacing: true) }
        do {
            try source.rename(to: target, replacing: false)
        } catch .invalidArgument, .noFunction {
            do {
                try source.link(at: target)
                try? source.unlink()
            } catch .notPermitted, .notSupported {
                guard !target.exists else { throw .fileExists }
                try source.rename(to: target, replacing: true)
            }
        }
    }

    /// The permissions a new file gets, as curl and wget give them: 0666 without the process's umask. The umask is
    /// read once, at the first new file, from /proc/self/status, since umask(2) can only be read by setting it, which
    /// races with other threads.
    static let permissionsForNewFiles: mode_t = {
        let fallback: mode_t = 0o022
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
            let mask = mode_t(String(line.dropFirst("Umask:".count).filter { !$0.isWhitespace }), radix: 8)
        else { return 0o666 & ~fallback }
        return 0o666 & ~mask
    }()

    /// The size of the file at `path`, or nil if there is none.
    static func size(of path: AnchoredPath) -> Int64? {
        try? path.status(followingLink: true).size
    }

    func removeDownloadState() {
        try? part.unlink()
        ManifestStore(path: manifest).remove()
    }
}
