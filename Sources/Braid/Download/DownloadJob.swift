import Logging
import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// One download from probe to verified file, run synchronously on a thread of its own.
///
/// probe → choose the destination → resume from the manifest or plan afresh → transfer → verify → rename.
/// A remote file that changes mid-way, or a server that turns out to ignore ranges, sends it back to the probe.
struct DownloadJob: Sendable {
    let url: String
    let options: DownloadOptions
    let interrupter: Interrupter
    /// Connections shared with other downloads of a `DownloadManager`, if any.
    let budget: ConnectionBudget?
    /// Final paths claimed by the downloads of the same `DownloadManager`, if any.
    let claims: DestinationClaims?
    /// How messages name this download to the user: "line 3" of a list, else its URL without credentials.
    let label: String
    let logger: Logger
    let emit: @Sendable (DownloadEvent) -> Void

    private static let maximumRestarts = 3

    /// How this download's requests are made; the user's headers go to the origins of the URLs named here only.
    private var requestOptions: RequestOptions {
        var requestOptions = options.requestOptions
        requestOptions.headerOrigins = Set(([url] + options.mirrors).compactMap(Origin.init(url:)))
        return requestOptions
    }

    func run() throws(BraidError) -> DownloadResult {
        let started = TransferEngine.now()
        try Self.validate(url: url)
        for mirror in options.mirrors { try Self.validate(url: mirror) }
        try options.validate()
        try DestinationPaths.checkWritableDirectory(for: options.destination)

        // Cancelled before it began (a cancelled task, say): nothing is probed or created.
        if interrupter.isEnding, let reason = interrupter.reason { throw Self.stop(reason, paths: nil) }
        var forceSingleStream = false
        var distrustHead = false
        var restarts = 0
        while true {
            emit(.state(.probing))
            var prober = Prober(
                options: requestOptions,
                retryPolicy: options.retryPolicy,
                onRetry: { [emit] reason, delay in emit(.retry(reason: reason, delay: delay)) },
                onNotice: { [emit] message in emit(.notice(message)) },
                isCancelled: { [interrupter] in interrupter.isEnding }
            )
            prober.trustsHead = !distrustHead
            do throws(BraidError) {
                var resource = try prober.probe(url)
                if forceSingleStream { resource.acceptsRanges = false }
                let mirrors = usableMirrors(of: resource, prober: prober)
                let outcome = try attempt(resource: resource, mirrors: mirrors, started: started)
                switch outcome {
                case let .done(result):
                    return result
                case let .paused(paths):
                    emit(.state(.paused))
                    if let reason = interrupter.waitWhilePaused() {
                        throw Self.stop(reason, paths: paths)
                    }
                    emit(.notice("resuming"))
                case let .restart(reason, singleStream, rangedProbe):
                    restarts += 1
                    guard restarts <= Self.maximumRestarts else {
                        throw BraidError.protocolViolation("\(reason); gave up after \(restarts - 1) restarts")
                    }
                    forceSingleStream = forceSingleStream || singleStream
                    distrustHead = distrustHead || rangedProbe
                    emit(.notice(reason))
                }
            } catch {
                if error.code == .cancelled, let reason = interrupter.reason {
                    throw Self.stop(reason, paths: nil)
                }
                throw error
            }
        }
    }

    private enum AttemptOutcome {
        case done(DownloadResult)
        case restart(String, singleStream: Bool, rangedProbe: Bool = false)
        /// Stopped by `pause()`, progress saved; the files are at `paths`.
        case paused(DestinationPaths)
    }

    /// Probes each mirror; keeps those that serve the same length and, for a segmented download, byte ranges.
    private func usableMirrors(of resource: RemoteResource, prober: Prober) -> [RemoteResource] {
        guard resource.isSegmentable else {
            if !options.mirrors.isEmpty {
                emit(.notice("ignoring mirrors: the file cannot be split into ranges"))
            }
            return []
        }
        var prober = prober
        prober.retryPolicy.maximumAttempts = min(2, prober.retryPolicy.maximumAttempts)
        return options.mirrors.compactMap { mirror in
            do throws(BraidError) {
                let candidate = try prober.probe(mirror)
                guard candidate.length == resource.length, candidate.isSegmentable else {
                    emit(
                        .notice(
                            "dropping mirror \(mirror): it serves \(candidate.length ?? -1) bytes without ranges or of another length"
                        ))
                    return nil
                }
                return candidate
            } catch {
                emit(.notice("dropping mirror \(mirror): \(error.message)"))
                return nil
            }
        }
    }

    private func attempt(
        resource: RemoteResource,
        mirrors: [RemoteResource],
        started: Double
    ) throws(BraidError) -> AttemptOutcome {
        let paths = DestinationPaths.resolve(
            options.destination,
            suggestedFilename: resource.suggestedFilename,
            url: resource.requestedURL
        )
        if let holder = claims?.claim(paths.final, for: url, by: label) {
            throw BraidError(
                .fileExists,
                "\(label): \(paths.final) is already the destination of \(holder)",
                remedies: [.chooseAnotherDestination]
            )
        }
        try paths.refuseLinks()
        let store = ManifestStore(path: paths.manifest)
        if paths.exists(paths.final) && !options.overwrite && !store.exists {
            return .done(try existingFinal(paths: paths, resource: resource, started: started))
        }
        // Locked before the manifest is believed, and kept open through the rename, so no other download of this
        // file acts on the same state meanwhile.
        let file = try PartFile(lockingAt: paths.part, discards: options.discardData)
        defer { file.close() }
        let lockedSize = try file.currentSize()
        if paths.exists(paths.final) && !options.overwrite && lockedSize == 0 {
            // Another run finished this download between the check above and the lock, renaming its partial file:
            // the one just locked is a new, empty one.
            try? paths.part.unlink()
            return .done(try existingFinal(paths: paths, resource: resource, started: started))
        }
        // Measuring (`braid bench`) fetches part of the file, or writes nothing: no manifest, digest or rename.
        let measuring = options.byteLimit != nil || options.discardData
        var expectedDigest = measuring ? nil : options.expectedDigest ?? DigestHeaders.preferred(resource.digests)
        let segmented = resource.isSegmentable
        let wanted = min(resource.length ?? Int64.max, options.byteLimit ?? Int64.max)

        // Resume from the manifest only if it is valid, ours, and describes the same remote file.
        var progress: [Int64] = []
        var ranges: [Range<Int64>] = []
        if segmented && measuring {
            ranges = SegmentPlanner.plan(
                length: wanted,
                connections: options.connections,
                piecesPerConnection: options.piecesPerConnection
            )
        } else if segmented, let length = resource.length {
            if let manifest = try loadManifest(store, file: file, resource: resource, digest: expectedDigest) {
                ranges = manifest.segments.map { $0.start..<$0.end }
                progress = manifest.trustedProgress(onBoot: BootID.current)
                // A digest given to an earlier run still applies when this run is not told one.
                expectedDigest = expectedDigest ?? manifest.expectedDigest
            } else {
                ranges = SegmentPlanner.plan(
                    length: length,
                    connections: options.connections,
                    piecesPerConnection: options.piecesPerConnection
                )
            }
        } else {
            if store.exists || lockedSize > 0 {
                emit(.notice("the server does not support resuming; starting \(paths.part) from the beginning"))
            }
            try discardPartialData(file, store: store)
            ranges = [0..<wanted]
        }
        if progress.isEmpty && segmented && !store.exists, try file.currentSize() > 0 {
            emit(.notice("discarding \(paths.part): there is no manifest to say which of its bytes are good"))
            try file.resize(to: 0)
        }
        try file.prepare(length: segmented ? resource.length : 0)

        let scheduler = SegmentScheduler(
            ranges: ranges,
            progress: progress,
            connectionLimit: segmented ? options.connections : 1,
            retryPolicy: options.retryPolicy
        )
        let resumedBytes = scheduler.flushedBytes
        var checkpoints: TransferEngine.Checkpoints?
        if segmented && !measuring, let length = resource.length {
            let template = Manifest(
                url: URLUserinfo.removed(from: resource.requestedURL),
                resolvedURL: URLUserinfo.removed(from: resource.resolvedURL),
                length: length,
                etag: resource.etag,
                lastModified: resource.lastModified,
                digestAlgorithm: expectedDigest?.algorithm,
                digestHex: expectedDigest?.hex,
                digestSource: expectedDigest?.source,
                bootID: BootID.current,
                segments: []
            )
            checkpoints = TransferEngine.Checkpoints(store: store, template: template)
        }
        emit(.started(resource: resource, path: paths.final.string, resumedBytes: resumedBytes))
        emit(.state(.downloading))

        let hasher = try expectedDigest.map { digest throws(BraidError) in
            PrefixHasher(algorithm: digest.algorithm, reading: try file.openForReading())
        }
        hasher?.start()
        defer { hasher?.stop() }
        let syncer = checkpoints == nil ? nil : DurabilitySyncer(file: file)
        syncer?.start()
        defer { syncer?.stop() }

        let requestOptions = self.requestOptions
        let machine = TransferMachine(
            resource: resource,
            sources: ([resource] + mirrors).map {
                Source(resource: $0, options: requestOptions, usesRanges: segmented)
            },
            scheduler: scheduler,
            configuration: TransferMachine.Configuration(
                usesRanges: segmented,
                slots: segmented ? options.connections : 1,
                sharesConnections: budget != nil,
                keepsCheckpoints: checkpoints != nil,
                durableInterval: options.durableCheckpointInterval,
                randomSeed: .random(in: 0...UInt64.max)
            )
        )
        let engine = TransferEngine(
            machine: machine,
            sink: options.discardData ? DiscardingSink() : file,
            configuration: TransferEngine.Configuration(
                machine: machine.configuration, requestOptions: requestOptions, logger: logger),
            interrupter: interrupter,
            budget: budget,
            hasher: hasher,
            checkpoints: checkpoints,
            syncer: syncer,
            reports: TransferEngine.Reports(
                progress: { [emit] progress in emit(.progress(progress)) },
                retry: { [emit] reason, delay in emit(.retry(reason: reason, delay: delay)) },
                notice: { [emit] message in emit(.notice(message)) }
            )
        )
        let length: Int64
        switch engine.run() {
        case let .completed(finalLength):
            length = finalLength
        case let .remoteChanged(reason):
            try discardPartialData(file, store: store)
            return .restart("\(reason); discarding the partial download and starting again", singleStream: false)
        case .rangesIgnored:
            try discardPartialData(file, store: store)
            return .restart("the server ignores byte ranges; downloading in a single stream", singleStream: true)
        case let .lengthDisagrees(reason):
            try discardPartialData(file, store: store)
            return .restart("\(reason); probing again with a range request", singleStream: false, rangedProbe: true)
        case let .failed(error):
            throw error
        case .stopped(.paused):
            return .paused(paths)
        case let .stopped(reason):
            throw Self.stop(reason, paths: paths, resumable: segmented)
        }

        if measuring {
            try? paths.part.unlink()
            guard length == wanted || (wanted == Int64.max && !segmented) else {
                throw BraidError.integrity("received \(length) bytes, expected \(wanted)")
            }
            let result = result(paths: paths, length: length, digest: nil, resumed: 0, engine: engine, started: started)
            emit(.completed(result))
            return .done(result)
        }

        // Verify: the length always, the digest when one is known.
        emit(.state(.verifying))
        if !segmented { try file.resize(to: length) }
        let size = try file.currentSize()
        if let expected = resource.length, expected != length || size != expected {
            paths.removeDownloadState()
            throw BraidError.integrity(
                "length mismatch: expected \(expected) bytes, have \(size); the partial data was discarded")
        }
        hasher?.finish(totalLength: length)
        // The flush to disk overlaps the last of the hashing, which runs on the verifier's thread.
        if options.syncOnCompletion { try file.synchronize() }
        if let expectedDigest, let hasher {
            let actual = try hasher.waitForDigest()
            if actual != expectedDigest.bytes {
                paths.removeDownloadState()
                throw BraidError.integrity(
                    "\(expectedDigest.algorithm) mismatch: expected \(expectedDigest.hex) (from "
                        + "\(expectedDigest.source.rawValue)), got \(ExpectedDigest.encodeHex(actual)); "
                        + "the downloaded data was discarded and no file was written"
                )
            }
        }
        guard file.isStill(at: paths.part) else {
            throw BraidError.localIO(
                "\(paths.part) was replaced by another file during the download; nothing was moved to \(paths.final)")
        }
        // The finished file gets the permissions any new file would; FILE.part was private while incomplete.
        try file.setPermissions(DestinationPaths.permissionsForNewFiles)
        do {
            try paths.moveIntoPlace(replacing: options.overwrite)
        } catch {
            try? file.setPermissions(0o600)
            throw error
        }
        if options.syncOnCompletion { ManifestStore.syncDirectory(of: paths.final) }
        store.remove()
        let result = result(
            paths: paths,
            length: length,
            digest: expectedDigest,
            resumed: resumedBytes,
            engine: engine,
            started: started
        )
        emit(.completed(result))
        return .done(result)
    }

    private func result(
        paths: DestinationPaths,
        length: Int64,
        digest: ExpectedDigest?,
        resumed: Int64,
        engine: TransferEngine,
        started: Double
    ) -> DownloadResult {
        DownloadResult(
            path: paths.final.string,
            bytes: length,
            verifiedDigest: digest,
            resumedBytes: resumed,
            seconds: TransferEngine.now() - started,
            fetchedBytes: engine.machine.statistics.fetchedBytes,
            retries: engine.machine.statistics.retries,
            timeToFirstByte: engine.machine.statistics.timeToFirstByte
        )
    }

    /// A file already at the final name: refused, or in list mode verified in place and skipped.
    private func existingFinal(
        paths: DestinationPaths,
        resource: RemoteResource,
        started: Double
    ) throws(BraidError) -> DownloadResult {
        guard options.skipExistingIfVerified else {
            throw BraidError(.fileExists, "\(paths.final) already exists", remedies: [.overwrite])
        }
        return try verifyExisting(paths: paths, resource: resource, started: started)
    }

    /// Forgets the partial download: truncates the locked partial file (so the lock stays on the file that will be
    /// written next) and removes the manifest.
    private func discardPartialData(_ file: PartFile, store: ManifestStore) throws(BraidError) {
        store.remove()
        try file.resize(to: 0)
    }

    /// Checks a file already at the destination against the server's length and the expected digest.
    private func verifyExisting(
        paths: DestinationPaths,
        resource: RemoteResource,
        started: Double
    ) throws(BraidError) -> DownloadResult {
        emit(.state(.verifying))
        let size = DestinationPaths.size(of: paths.final) ?? -1
        guard resource.length == nil || resource.length == size else {
            throw BraidError(
                .fileExists,
                "\(paths.final) exists with \(size) bytes but the server's file has \(resource.length ?? -1)",
                remedies: [.overwrite]
            )
        }
        let digest = options.expectedDigest ?? DigestHeaders.preferred(resource.digests)
        if let digest {
            let reader: FileDescriptor
            do {
                reader = try FileDescriptor.open(paths.final, .readOnly)
            } catch {
                throw BraidError.localIO("cannot open \(paths.final) to verify it", error)
            }
            let hasher = PrefixHasher(algorithm: digest.algorithm, reading: reader)
            hasher.start()
            defer { hasher.stop() }
            hasher.advance(to: size)
            hasher.finish(totalLength: size)
            let actual = try hasher.waitForDigest()
            guard actual == digest.bytes else {
                throw BraidError(
                    .fileExists,
                    "\(paths.final) exists but its \(digest.algorithm) does not match (from "
                        + "\(digest.source.rawValue))",
                    remedies: [.overwrite]
                )
            }
        }
        emit(
            .notice(
                "\(paths.final) is already complete (\(digest.map { "\($0.algorithm) verified" } ?? "length verified"))"
            ))
        let result = DownloadResult(
            path: paths.final.string,
            bytes: size,
            verifiedDigest: digest,
            resumedBytes: size,
            seconds: TransferEngine.now() - started,
            fetchedBytes: 0,
            retries: 0,
            timeToFirstByte: nil
        )
        emit(.completed(result))
        return result
    }

    /// The manifest to resume from, nil to start afresh, or an error for one that must not be used silently.
    private func loadManifest(
        _ store: ManifestStore,
        file: PartFile,
        resource: RemoteResource,
        digest: ExpectedDigest?
    ) throws(BraidError) -> Manifest? {
        let manifest: Manifest
        do {
            guard let loaded = try store.load() else { return nil }
            manifest = loaded
        } catch {
            guard error.code == .manifest else { throw error }
            guard options.overwrite else {
                throw BraidError(.manifest, error.message, remedies: [.discardPartialDownload], cause: error.cause)
            }
            emit(.notice("\(error.message); discarding it, as overwriting was asked for"))
            try discardPartialData(file, store: store)
            return nil
        }
        guard manifest.belongs(to: resource.requestedURL) else {
            guard options.overwrite else {
                throw BraidError(
                    .manifest,
                    "\(store.path) belongs to another download (\(manifest.url))",
                    remedies: [.discardPartialDownload, .chooseAnotherDestination]
                )
            }
            emit(.notice("\(store.path) belongs to \(manifest.url); discarding it, as overwriting was asked for"))
            try discardPartialData(file, store: store)
            return nil
        }
        var changes: [String] = []
        if manifest.length != resource.length { changes.append("length \(manifest.length) → \(resource.length ?? -1)") }
        if manifest.etag != resource.etag {
            changes.append("ETag \(manifest.etag ?? "none") → \(resource.etag ?? "none")")
        }
        if manifest.lastModified != resource.lastModified { changes.append("Last-Modified changed") }
        // Only a server's digest says something about the file; a user's may simply have been corrected.
        if let recorded = manifest.expectedDigest, let digest, recorded.source != .user, digest.source != .user,
            recorded.algorithm == digest.algorithm, recorded.bytes != digest.bytes
        {
            changes.append("\(digest.algorithm) digest changed")
        }
        if !changes.isEmpty {
            emit(
                .notice("the remote file changed (\(changes.joined(separator: ", "))); discarding the partial download")
            )
            try discardPartialData(file, store: store)
            return nil
        }
        let size = try file.currentSize()
        guard size == manifest.length else {
            emit(.notice("\(file.path) is missing or has the wrong size; starting over"))
            try discardPartialData(file, store: store)
            return nil
        }
        return manifest
    }

    private static func validate(url: String) throws(BraidError) {
        guard url.utf8.count <= DownloadOptions.maximumTextLength else {
            throw .usage("a URL of \(url.utf8.count) bytes is too long")
        }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            throw .usage("'\(url)' is not a valid URL")
        }
        guard scheme == "http" || scheme == "https" else {
            throw .usage("only http and https URLs are supported, got '\(scheme):'")
        }
        guard let host = components.host, !host.isEmpty else { throw .usage("'\(url)' has no host") }
    }

    /// The error that ends a stopped download; a cancellation that asks for it also removes the partial file.
    private static func stop(_ reason: StopReason, paths: DestinationPaths?, resumable: Bool = true) -> BraidError {
        let saved =
            (resumable ? paths : nil).map {
                " Progress is saved in \($0.manifest); run the same command again to resume."
            } ?? ""
        switch reason {
        case .interrupted, .paused:
            return BraidError(.interrupted, "interrupted." + saved)
        case .cancelled(removingPartialFile: true):
            paths?.removeDownloadState()
            return BraidError(.cancelled, "cancelled; the partial download was removed.")
        case .cancelled(removingPartialFile: false):
            return BraidError(.cancelled, "cancelled." + saved)
        }
    }
}
