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
    /// of its directories. Refused if another download of the same manager goes there, or if it or one of its
    /// companions is a path the manager keeps from downloads. Returns too whether it is the place looked at.
    static func claim(
        _ place: DestinationPaths.Place, opened: DestinationPaths.Opened?, for url: String, by label: String,
        in claims: DestinationClaims?, directories: OpenDirectories?
    ) throws(BraidError) -> (DestinationPaths, lookedAt: Bool) {
        let paths: DestinationPaths
        let lookedAt = opened?.place == place
        if lookedAt, let looked = opened?.paths {
            paths = looked
        } else {
            // Not looked at, or looked at and found without its directory, which is made now.
            paths = try DestinationPaths.open(place, creating: true, known: directories)
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

    /// Checks `body`, the whole of `resource`, against its length and the digest it is held to (of those offered
    /// for a download with `options`: `DownloadJob.offeredDigests`, `unrecordedDigest`), then places it at `paths`
    /// (`place`). Nil, with nothing written, when it fails its check or cannot be placed so: a partial file then
    /// takes over. `notice` is told a weaker digest overruled and a time not set.
    static func checkAndPlace(
        _ body: [UInt8], of resource: RemoteResource, at paths: DestinationPaths, options: DownloadOptions,
        checksumFiles: ChecksumFiles, notice: (String) -> Void
    ) throws(BraidError) -> Placed? {
        guard resource.length == Int64(body.count) else { return nil }
        let offered = try DownloadJob.offeredDigests(
            options: options, checksumFiles: checksumFiles, for: resource, paths: paths)
        let digest = DownloadJob.unrecordedDigest(offered: offered, notice: notice)
        guard matches(body, digest), try place(body, of: resource, at: paths, options: options, notice: notice) else {
            return nil
        }
        return Placed(digest: digest)
    }

    /// Whether `body` has `digest`, when there is one.
    private static func matches(_ body: [UInt8], _ digest: ExpectedDigest?) -> Bool {
        guard let digest else { return true }
        let hasher = Hasher(digest.algorithm)
        body.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize() == digest.bytes
    }

    /// Writes `body`, the whole of `resource`, into an unnamed file in the directory of `paths` and gives it its
    /// final name (`UnnamedFile`), flushed first when `options` say so, with the server's time when they ask for
    /// it: no `FILE.part`, lock or manifest. False, with nothing left behind, when it cannot go this way and a
    /// partial file is to take over: the file system makes or names no unnamed file.
    ///
    /// A file that appeared at the final name meanwhile is left alone, as a partial file's rename leaves it
    /// (`DestinationPaths.moveIntoPlace`): that is thrown.
    ///
    /// - Parameter notice: told what the user should know that does not stop the file (its time was not set).
    private static func place(
        _ body: [UInt8], of resource: RemoteResource, at paths: DestinationPaths, options: DownloadOptions,
        notice: (String) -> Void
    ) throws(BraidError) -> Bool {
        guard let directory = paths.final.directory else { return false }
        let made: UnnamedFile?
        do {
            made = try UnnamedFile.create(in: directory)
        } catch {
            throw .localIO("cannot create \(paths.final)", error)
        }
        guard let file = made else { return false }
        let written = body.withUnsafeBytes { bytes -> Errno? in
            do throws(Errno) {
                try file.write(bytes)
                return nil
            } catch {
                return error
            }
        }
        if let written { throw .localIO("writing \(paths.final)", written) }
        setRemoteTime(of: file.descriptor, resource: resource, options: options, shownAs: paths.final, notice: notice)
        if options.syncOnCompletion {
            do {
                try file.descriptor.synchronize()
            } catch {
                throw .localIO("syncing \(paths.final)", error)
            }
        }
        do {
            try file.name(paths.final)
        } catch .fileExists {
            throw BraidError(
                .fileExists,
                "\(paths.final) appeared while downloading and was left alone; the downloaded data was not kept",
                remedies: [.overwrite],
                cause: .errno(.fileExists)
            )
        } catch {
            // Named neither with AT_EMPTY_PATH (a right older kernels give root only) nor through /proc (not
            // mounted), or on a file system with no hard links: the partial file takes over, and is renamed.
            return false
        }
        if options.syncOnCompletion { paths.final.synchronizeDirectory() }
        return true
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
