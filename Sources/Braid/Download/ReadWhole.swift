import SystemPackage

/// The rules for a file that one GET reads whole, as functions of their inputs: a download's first GET on its
/// lane's pool thread (`PooledStart`, `DownloadJob.placeOnPool`) and a manager's direct file (`DirectFile`) both
/// run them, so that each rule has one owner whichever path a file takes.
enum ReadWhole {
    /// Whether nothing of an earlier download is at `place` (a manifest to resume, a partial file, or with
    /// `options` that keep it, a file), so that a first GET may start it afresh; and the destination opened to
    /// look, for the claim to use when the name stays the same. Where a directory of the place is missing, the
    /// place alone: nothing is made before the server answers.
    ///
    /// The names are found absent in the manager's listing of the directory (`OpenDirectories.lacksAll`), or looked
    /// up where there is none, or where a download of the manager claimed the name, so that its files may have come
    /// after the listing.
    static func look(
        at place: DestinationPaths.Place, options: DownloadOptions, directories: OpenDirectories?,
        claims: DestinationClaims?
    ) -> (startsAfresh: Bool, opened: DestinationPaths.Opened?) {
        let present: DestinationPaths?
        do {
            present = try DestinationPaths.openIfPresent(place, known: directories)
        } catch {
            return (true, nil)
        }
        // A directory of it is missing (a list's `out=sub/name`, an object under a new prefix): nothing is there.
        guard let paths = present else { return (true, DestinationPaths.Opened(place: place, paths: nil)) }
        let written = options.overwrite ? [paths.manifest, paths.part] : [paths.manifest, paths.part, paths.final]
        let listed: Bool? =
            if let directories, let claims, let directory = paths.final.directory,
                !claims.isClaimed(paths.finalPath)
            {
                directories.lacksAll(written.map(\.lastComponent), in: directory)
            } else {
                nil
            }
        let afresh = listed ?? !written.contains(where: paths.exists)
        return (afresh, DestinationPaths.Opened(place: place, paths: paths))
    }

    /// Takes `place` as the destination of `url`'s download, named `label` in messages, and opens it: as the look
    /// before the first GET opened it (`opened`) when it is the place looked at, else afresh, making what is missing
    /// of its directories (durable as they are made where `options` flush the file). Refused if another download
    /// of the same manager goes there, or if it or one of its companions is a path the manager keeps from
    /// downloads. Returns too whether it is the place looked at.
    static func claim(
        _ place: DestinationPaths.Place, opened: DestinationPaths.Opened?, for url: String, by label: String,
        options: DownloadOptions, in claims: DestinationClaims?, directories: OpenDirectories?
    ) throws(BraidError) -> (DestinationPaths, lookedAt: Bool) {
        let paths: DestinationPaths
        let lookedAt = opened?.place == place
        if lookedAt, let looked = opened?.paths {
            paths = looked
        } else {
            // Not looked at, or looked at and found without its directory, which is made now.
            paths = try DestinationPaths.open(
                place, creating: true, synchronizing: options.syncOnCompletion, known: directories)
        }
        if let owner = claims?.reservation(of: paths.finalPath) {
            throw BraidError(
                .fileExists,
                "\(label): \(paths.final) would replace \(owner), which no download may write",
                remedies: [.chooseAnotherDestination]
            )
        }
        if let holder = claims?.claim(paths.finalPath, for: url, by: label) {
            throw BraidError(
                .fileExists,
                "\(label): \(paths.final) is already the destination of \(holder)",
                remedies: [.chooseAnotherDestination]
            )
        }
        return (paths, lookedAt)
    }

    /// What `checkAndPlace` placed a file with.
    struct Placed {
        /// The digest it was checked against; nil when it had none, and only its length was checked.
        let digest: ExpectedDigest?
    }

    /// A file read whole, checked and written without a name (`checkAndWrite`), for its caller to name.
    struct Written {
        let file: UnnamedFile
        /// The digest it was checked against; nil when it had none, and only its length was checked.
        let digest: ExpectedDigest?
    }

    /// Checks `body`, the whole of `resource`, and places it at `paths` (`checkAndWrite`, then `name`), flushed
    /// first when `options` say so. Nil, with nothing named, when it fails its check or cannot be placed so: a
    /// partial file then takes over. `notice` is told a weaker digest overruled and a time not set.
    static func checkAndPlace(
        _ body: [UInt8], of resource: RemoteResource, at paths: DestinationPaths, options: DownloadOptions,
        checksumFiles: ChecksumFiles, notice: (String) -> Void
    ) throws(BraidError) -> Placed? {
        guard
            let written = try checkAndWrite(
                body, of: resource, at: paths, options: options, checksumFiles: checksumFiles, notice: notice),
            try name(written.file, at: paths, options: options)
        else { return nil }
        return Placed(digest: written.digest)
    }

    /// Checks `body`, the whole of `resource`, against its length and the digest it is held to (of those offered
    /// for a download with `options`: `DownloadJob.offeredDigests`, `unrecordedDigest`), then writes it into an
    /// unnamed file in the directory of `paths` (`UnnamedFile`), with the server's time when `options` ask for it:
    /// no `FILE.part`, lock or manifest. Nil, with nothing written, when it fails its check or the file system makes
    /// no unnamed file: a partial file then takes over. `notice` is told a weaker digest overruled and a time not
    /// set.
    static func checkAndWrite(
        _ body: [UInt8], of resource: RemoteResource, at paths: DestinationPaths, options: DownloadOptions,
        checksumFiles: ChecksumFiles, notice: (String) -> Void
    ) throws(BraidError) -> Written? {
        guard resource.length == Int64(body.count) else { return nil }
        let offered = try DownloadJob.offeredDigests(
            options: options, checksumFiles: checksumFiles, for: resource, paths: paths)
        let digest = DownloadJob.unrecordedDigest(offered: offered, notice: notice)
        guard matches(body, digest), let directory = paths.final.directory else { return nil }
        let made: UnnamedFile?
        do {
            made = try UnnamedFile.create(in: directory)
        } catch {
            throw .localIO("cannot create \(paths.final)", error)
        }
        guard let file = made else { return nil }
        let failed = body.withUnsafeBytes { bytes -> Errno? in
            do throws(Errno) {
                try file.write(bytes)
                return nil
            } catch {
                return error
            }
        }
        if let failed { throw .localIO("writing \(paths.final)", failed) }
        setRemoteTime(of: file.descriptor, resource: resource, options: options, shownAs: paths.final, notice: notice)
        return Written(file: file, digest: digest)
    }

    /// Whether `body` has `digest`, when there is one.
    private static func matches(_ body: [UInt8], _ digest: ExpectedDigest?) -> Bool {
        guard let digest else { return true }
        let hasher = Hasher(digest.algorithm)
        body.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize() == digest.bytes
    }

    /// Gives `file` its final name at `paths`, flushed first when `options` say so, and makes the name durable.
    /// False, with nothing named, when the file system names no unnamed file: the partial file takes over, and is
    /// renamed (`UnnamedFile.name`: named neither with `AT_EMPTY_PATH`, a right older kernels give root only, nor
    /// through `/proc`, which is not mounted).
    ///
    /// A file that appeared at the final name meanwhile is left alone, as a partial file's rename leaves it
    /// (`DestinationPaths.moveIntoPlace`): that is thrown (`error(of:at:)`).
    private static func name(
        _ file: UnnamedFile, at paths: DestinationPaths, options: DownloadOptions
    ) throws(BraidError) -> Bool {
        if options.syncOnCompletion {
            do {
                try file.descriptor.synchronize()
            } catch {
                throw Self.error(of: .flush(error), at: paths)
            }
        }
        do {
            try file.name(paths.final)
        } catch .fileExists {
            throw Self.error(of: .name(.fileExists), at: paths)
        } catch {
            return false
        }
        if options.syncOnCompletion { paths.final.synchronizeDirectory() }
        return true
    }

    /// Whether a file written whole with `options` is flushed and named by a manager's `NamingQueue`, with others,
    /// rather than in its download's slot (`name`): where it is to be flushed, and naming an unnamed file is known
    /// to work here (`UnnamedFile.namesFiles`), so that what fails in the queue is the file's own, never a way for
    /// a partial file to take over.
    static func namedInQueue(options: DownloadOptions) -> Bool {
        options.syncOnCompletion && UnnamedFile.namesFiles
    }

    /// The error a file read whole ends with where its flush or its name at `paths` failed (`failure`).
    static func error(of failure: NamingQueue.Failure, at paths: DestinationPaths) -> BraidError {
        switch failure {
        case let .flush(error):
            .localIO("syncing \(paths.final)", error)
        case .name(.fileExists):
            BraidError(
                .fileExists,
                "\(paths.final) appeared while downloading and was left alone; the downloaded data was not kept",
                remedies: [.overwrite],
                cause: .errno(.fileExists)
            )
        case let .name(error):
            .localIO("naming \(paths.final)", error)
        }
    }

    /// Gives the file at `descriptor` the server's modification time of `resource`, where `options` ask for it
    /// (`--remote-time`, `-N`); `notice` is told when it cannot be set.
    static func setRemoteTime(
        of descriptor: FileDescriptor, resource: RemoteResource, options: DownloadOptions, shownAs path: AnchoredPath,
        notice: (String) -> Void
    ) {
        guard options.setsRemoteTime || options.timestamping,
            let modified = resource.lastModified.flatMap({ HTTPDate.parse($0, wallClock: TransferEngine.wallClock()) })
        else { return }
        do {
            try descriptor.setModificationTime(secondsSince1970: modified)
        } catch {
            notice("cannot set the modification time of \(path): \(error)")
        }
    }

    /// What fetching a file read whole cost, `length` bytes: a transfer of it in one request, not retried.
    static func statistics(length: Int64, firstByteSeconds: Double) -> TransferMachine.Statistics {
        TransferMachine.Statistics(fetchedBytes: length, retries: 0, timeToFirstByte: firstByteSeconds)
    }
}
