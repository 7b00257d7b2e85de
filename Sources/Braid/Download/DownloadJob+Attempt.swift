import SystemPackage

/// One pass from the probe's answer to the file in place: destination → resume or plan → transfer → verify →
/// commit.
extension DownloadJob {
    /// What the transfer is to do: its ranges, what of them is already on disk, and what it is checked against.
    struct TransferPlan {
        var ranges: [Range<Int64>]
        /// Bytes on disk at the start of each range, from the manifest; empty for a fresh plan.
        var progress: [Int64] = []
        /// Byte ranges in parallel (and resumable), or one stream.
        var segmented: Bool
        var digest: ExpectedDigest?
        /// Bytes at the start of each range that digests vouched for, when the download checks pieces; nil when it
        /// checks none.
        var verified: [Int64]? = nil
        /// The piece hashes each segment is checked against, when there are some.
        var pieceHashes: PieceHashes? = nil

        /// The digest the whole file is hashed against: none when the Metalink that gave it also gave piece hashes
        /// at least as strong, since a file whose every piece matches is the file they describe, and hashing it
        /// all a second time would only cost time.
        var wholeFileDigest: ExpectedDigest? {
            guard let digest, let pieceHashes, digest.source == .metalink,
                pieceHashes.algorithm.strength >= digest.algorithm.strength
            else { return digest }
            return nil
        }
        /// The digest the complete data failed in an earlier run, carried into every checkpoint until it passes.
        var failedDigest: Manifest.FailedDigest? = nil
        /// For a repair pass, the ranges rewritten so far (by the pass being continued); nil for a download.
        var repairing: [Range<Int64>]? = nil

        /// Whether `first`, the probe's response, may be this plan's first request: a fresh plan, which starts where
        /// its bytes do (or, without ranges, the whole file from its start). The transfer keeps what its first
        /// request asks for of them (`TransferMachine.Configuration.probeRange`).
        func begins(with first: ParkedResponse) -> Bool {
            guard progress.isEmpty, repairing == nil, pieceHashes == nil, let start = ranges.first else { return false }
            guard segmented else { return first.range == nil }
            return first.range?.lowerBound == start.lowerBound
        }
    }

    /// - Parameters:
    ///   - first: the probe's response, the file from its start, its body waiting: the transfer's first request
    ///     when the plan begins with it, else given up.
    ///   - opened: the destination as opened before the probe, used if the file's name is still the same.
    func attempt(
        _ resource: RemoteResource,
        mirrors: [RemoteResource],
        first: ParkedResponse? = nil,
        opened: DestinationPaths.Opened? = nil,
        started: Double,
        lifecycle: inout DownloadLifecycle
    ) throws(BraidError) -> AttemptOutcome {
        defer { first?.cancel() }
        if let expected = options.expectedLength, let length = resource.length, length != expected {
            throw .integrity("\(url) serves \(length) bytes, not the \(expected) its Metalink gives")
        }
        let (paths, lookedAt) = try claimDestination(for: resource, opened: opened)
        // The look before the probe found nothing at this place (no manifest, partial file or final file), and the
        // probe read the file whole: it is placed at once.
        if lookedAt, !options.overwrite, let first, let body = first.body,
            let placed = try placeReceived(
                body, of: first, resource: resource, paths: paths, started: started, lifecycle: &lifecycle)
        {
            return placed
        }
        let manifestAbsent = try paths.refuseLinks()
        let store = ManifestStore(path: paths.manifest, knownAbsent: manifestAbsent)
        // With timestamping, a file at the final name is replaced unless it is as new as the server's.
        let replacesFinal = options.overwrite || (options.timestamping && paths.exists(paths.final))
        // A stream whose file is not kept has nothing at the final name to check or to replace.
        let keepsFinal = options.stream?.keepsFile ?? true
        if keepsFinal && options.timestamping && paths.exists(paths.final) && !store.exists,
            let result = try keepIfUpToDate(paths: paths, resource: resource, started: started)
        {
            lifecycle.alreadyComplete()
            return .done(result)
        }
        if keepsFinal && paths.exists(paths.final) && !replacesFinal && !store.exists {
            lifecycle.alreadyComplete()
            return .done(try existingFinal(paths: paths, resource: resource, started: started))
        }
        // Locked before the manifest is believed, and kept open through the rename, so no other download of this
        // file acts on the same state meanwhile.
        // Gathered before the partial file is created: a checksum file without a line for the name leaves nothing.
        let offered = try offeredDigests(for: resource, paths: paths)
        try refuseUnverifiableCachePeers(resource, offered: offered, store: store)
        let file = try PartFile(lockingAt: paths.part)
        defer { file.close() }
        if keepsFinal && paths.exists(paths.final) && !replacesFinal, try file.currentSize() == 0 {
            // Another run finished this download between the check above and the lock, renaming its partial file:
            // the one just locked is a new, empty one.
            try? paths.part.unlink()
            lifecycle.alreadyComplete()
            return .done(try existingFinal(paths: paths, resource: resource, started: started))
        }
        // An attempt that ends without its file leaves no file that holds no downloaded byte: a failure before the
        // first byte (a refusal, a full disk) or a fresh start would otherwise leave an empty FILE.part until the
        // next run. An interruption leaves its files as they are, for the resume its message promises.
        do throws(BraidError) {
            let plan = try resumeOrPlan(resource, offered: offered, paths: paths, file: file, store: store)
            let adopted = first.flatMap { plan.begins(with: $0) ? $0 : nil }
            if adopted == nil { first?.cancel() }
            lifecycle.advance()
            let outcome = try fetch(
                resource, mirrors: mirrors, plan: plan, adopting: adopted, file: file, store: store, paths: paths,
                keepsFinal: keepsFinal, replacesFinal: replacesFinal, started: started, lifecycle: &lifecycle)
            if case .restart = outcome { removeWhatHoldsNoBytes(file, paths: paths, store: store, resource: resource) }
            return outcome
        } catch {
            if error.code != .interrupted && error.code != .cancelled {
                removeWhatHoldsNoBytes(file, paths: paths, store: store, resource: resource)
            }
            throw error
        }
    }

    /// The transfer of a planned download, then its checks and its rename: what `attempt` does once the file is
    /// locked and planned.
    private func fetch(
        _ resource: RemoteResource,
        mirrors: [RemoteResource],
        plan: TransferPlan,
        adopting adopted: ParkedResponse?,
        file: PartFile,
        store: ManifestStore,
        paths: DestinationPaths,
        keepsFinal: Bool,
        replacesFinal: Bool,
        started: Double,
        lifecycle: inout DownloadLifecycle
    ) throws(BraidError) -> AttemptOutcome {
        var plan = plan
        // The whole-file digest is hashed unless the pieces vouch for every byte in its stead.
        let hasher = try plan.wholeFileDigest.map { digest throws(BraidError) in
            PrefixHasher(algorithm: digest.algorithm, reading: try file.openForReading())
        }
        hasher?.start()
        defer { hasher?.stop() }
        let stream = try options.stream.map { options throws(BraidError) in
            try openStream(options, plan: &plan, resource: resource, file: file, store: store, hasher: hasher)
        }
        stream?.start()
        defer { stream?.stop() }
        let repairSink = plan.repairing.map { RepairingSink(file: file, rewritten: $0) }
        // A small file fetched in one request, the probe's, keeps no manifest while it comes (a rerun fetches it
        // again); only a digest mismatch records it, to keep the data for a repair. A stream keeps one: its window's
        // state is in it. Its plan is one piece, and one connection fetches it in one request: the probe's response,
        // which carries the file to its end, is kept whole.
        let oneRequest =
            adopted != nil && plan.ranges.count == 1 && (resource.length ?? .max) <= Self.oneRequestLength
            && stream == nil
        var record =
            plan.segmented ? self.checkpoints(for: resource, plan: plan, store: store, repair: repairSink) : nil
        if let stream {
            record?.annotate = { stream.annotate(&$0) }
            record?.saved = { stream.feed.checkpointSaved() }
        }
        let checkpoints = oneRequest ? nil : record
        if repairSink != nil, plan.progress.isEmpty, let checkpoints {
            try beginRepair(checkpoints, plan: plan)
        }
        let transfer: TransferRun
        if oneRequest, let adopted, let body = adopted.body {
            // The probe read the file to its end: its bytes are written here, with no transfer to run.
            if !adopted.startReported { reportStart(of: resource, at: paths.finalPath.string) }
            transfer = try writeReceived(body, of: adopted, file: file, hasher: hasher)
        } else {
            // A body read whole that this plan cannot use is not adopted (`ParkedResponse.adopt()`): the transfer
            // fetches its bytes afresh.
            transfer = try runTransfer(
                resource, mirrors: mirrors, plan: plan, file: file, sink: repairSink, hasher: hasher,
                checkpoints: checkpoints, stream: stream, paths: paths, adopting: adopted, oneRequest: oneRequest)
        }
        lifecycle.record(transfer.statistics)
        guard case let .completed(length) = transfer.outcome else {
            do {
                return try unfinished(
                    transfer.outcome, plan: plan, resumable: checkpoints != nil, resource: resource, paths: paths,
                    file: file, store: store)
            } catch {
                throw stream?.explain(error, manifest: paths.manifest) ?? error
            }
        }
        if options.syncOnCompletion && checkpoints == nil {
            // No syncer wrote its pieces back as they completed: the disk starts now, while the digest and the
            // other downloads' flushes run, and the flush before the rename has less to wait for.
            try? file.descriptor.startWriteBack(of: 0..<length)
        }
        lifecycle.advance()
        let repaired: RepairingSink?
        let extraction: ExtractionSummary?
        switch try check(
            length: length, transfer: transfer, plan: plan, resource: resource, mirrors: mirrors, file: file,
            store: store, paths: paths, hasher: hasher, repair: repairSink, checkpoints: record, stream: stream,
            lifecycle: &lifecycle)
        {
        case let .verified(sink, summary): (repaired, extraction) = (sink, summary)
        case let .unfinished(outcome): return outcome
        }
        lifecycle.advance()
        if keepsFinal { try commit(file, paths: paths, store: store, resource: resource, replacing: replacesFinal) }
        lifecycle.advance()
        var result = completed(
            length: length, plan: plan, transfer: transfer, path: keepsFinal ? paths.finalPath.string : "",
            repaired: repaired, extraction: extraction, started: started, spent: lifecycle.spent)
        result.lengthVerified = resource.length != nil
        emit(.completed(result))
        return .done(result)
    }

    /// How a completed transfer's checks ended.
    private enum Checked {
        /// The file is right: the repair's sink when one rewrote bytes, and what a stream unpacked.
        case verified(RepairingSink?, ExtractionSummary?)
        /// A repair from the origin did not finish.
        case unfinished(AttemptOutcome)
    }

    /// Checks a completed transfer's file against its digest (through the stream's end for a stream, which was
    /// already written out) and, where cache peers served bytes that fail it, repairs them from the origin.
    private func check(
        length: Int64,
        transfer: TransferRun,
        plan: TransferPlan,
        resource: RemoteResource,
        mirrors: [RemoteResource],
        file: PartFile,
        store: ManifestStore,
        paths: DestinationPaths,
        hasher: PrefixHasher?,
        repair repairSink: RepairingSink?,
        checkpoints record: TransferEngine.Checkpoints?,
        stream: StreamSession?,
        lifecycle: inout DownloadLifecycle
    ) throws(BraidError) -> Checked {
        let verifyFile = { [self] () throws(BraidError) in
            try verify(
                file, length: length, resource: resource, plan: plan, hasher: hasher, repair: repairSink,
                checkpoints: record, paths: paths)
        }
        if let stream {
            return .verified(repairSink, try finishStream(stream, length: length, paths: paths, verify: verifyFile))
        }
        do {
            try verifyFile()
            return .verified(repairSink, nil)
        } catch {
            // Bytes cache peers served are fetched again from the origin, and only those that differ rewritten.
            switch try repairFromOrigin(
                after: error, transfer: transfer, plan: plan, resource: resource, mirrors: mirrors, file: file,
                store: store, paths: paths, length: length, lifecycle: &lifecycle)
            {
            case nil: throw error
            case let .repaired(sink)?: return .verified(sink, nil)
            case let .unfinished(outcome)?: return .unfinished(outcome)
            }
        }
    }

    /// What a completed download reports, said as a notice too where a repair rewrote bytes.
    private func completed(
        length: Int64, plan: TransferPlan, transfer: TransferRun, path: String, repaired: RepairingSink?,
        extraction: ExtractionSummary?, started: Double, spent: TransferMachine.Statistics
    ) -> DownloadResult {
        var result = DownloadResult(
            path: path, bytes: length, verifiedDigest: plan.wholeFileDigest, resumedBytes: transfer.resumedBytes,
            seconds: TransferEngine.now() - started, statistics: spent)
        result.verifiedPieces = plan.pieceHashes.map {
            DownloadResult.VerifiedPieces(algorithm: $0.algorithm, count: $0.digests.count)
        }
        result.repairedRanges = repaired?.rewrittenRanges
        result.peerBytes = options.cachePeers.isEmpty ? nil : spent.peerBytes
        result.extraction = extraction
        if let repairedRanges = result.repairedRanges { emit(.notice(Self.repairSummary(repairedRanges))) }
        return result
    }

    /// A transfer that did not complete: paused, restarted (its partial data discarded), or an error.
    func unfinished(
        _ outcome: TransferMachine.Outcome,
        plan: TransferPlan,
        resumable: Bool,
        resource: RemoteResource,
        paths: DestinationPaths,
        file: PartFile,
        store: ManifestStore
    ) throws(BraidError) -> AttemptOutcome {
        if let restart = DownloadLifecycle.Restart(outcome) {
            // The partial data belongs to a file that is not the one to download any more; a digest given for the
            // file wanted still applies to the next attempt.
            try discardPartialData(file, store: store, keepingRecordOf: plan.digest, for: resource)
            return .restart(restart)
        }
        switch outcome {
        case let .failed(error): throw error
        case .stopped(.paused): return .paused(paths)
        case let .stopped(reason): throw Self.stop(reason, paths: paths, resumable: resumable)
        default: preconditionFailure("Invalid state: \(outcome) is not an unfinished transfer")
        }
    }

    /// Where the file goes; refused if another download of the same manager goes there, or if it or one of its
    /// companions is a path the manager keeps from downloads. Returns too whether it is the place the look before
    /// the probe opened (`opened`).
    func claimDestination(
        for resource: RemoteResource, opened: DestinationPaths.Opened?
    ) throws(BraidError) -> (DestinationPaths, lookedAt: Bool) {
        let place = try place(suggestedFilename: resource.suggestedFilename, url: resource.requestedURL)
        return try ReadWhole.claim(
            place, opened: opened, for: url, by: label, options: options, in: claims, directories: directories)
    }

    /// Resumes from the manifest if it is valid, ours, and describes the same remote file; else plans afresh. The
    /// manifest is read whether or not the server resumes, since the digest it records still holds.
    private func resumeOrPlan(
        _ resource: RemoteResource,
        offered: [ExpectedDigest],
        paths: DestinationPaths,
        file: PartFile,
        store: ManifestStore
    ) throws(BraidError) -> TransferPlan {
        let earlier = try loadManifest(store, file: file, resource: resource, offered: offered)
        var plan: TransferPlan
        if resource.isSegmentable, let length = resource.length {
            try options.pieceHashes?.validate(totalLength: length)
            if let manifest = earlier.manifest {
                plan = resumedPlan(manifest, digest: earlier.digest, paths: paths)
                // A repair pass compares every byte with the server's instead.
                if plan.repairing == nil { try resumePieces(&plan, manifest: manifest, file: file, length: length) }
            } else {
                plan = TransferPlan(ranges: freshPlan(length: length), segmented: true, digest: earlier.digest)
                if let pieceHashes = options.pieceHashes {
                    plan.ranges = Self.aligned(plan.ranges, to: pieceHashes.pieceLength)
                    plan.verified = Array(repeating: 0, count: plan.ranges.count)
                    plan.pieceHashes = pieceHashes
                }
                if try file.currentSize() > 0 {
                    emit(.notice("discarding \(paths.part): there is no manifest to say which of its bytes are good"))
                    try file.resize(to: 0)
                }
            }
        } else {
            if try file.currentSize() > 0 || earlier.manifest != nil {
                emit(.notice("the server does not support resuming; starting \(paths.part) from the beginning"))
            }
            try file.resize(to: 0)
            plan = TransferPlan(ranges: [0..<(resource.length ?? Int64.max)], segmented: false, digest: earlier.digest)
        }
        try recordStart(of: plan, resuming: plan.segmented ? earlier.manifest : nil, store: store, resource: resource)
        try file.prepare(length: plan.segmented ? resource.length : 0)
        return plan
    }

    /// Before any data moves, makes the manifest on disk record the digest the file is now held to: a resumed
    /// manifest gets it in place of the one it had, when it outlives the data; a fresh start leaves only its record
    /// (or no manifest), so that an attempt that ends before its first checkpoint still binds the next run.
    private func recordStart(
        of plan: TransferPlan,
        resuming manifest: Manifest?,
        store: ManifestStore,
        resource: RemoteResource
    ) throws(BraidError) {
        guard var manifest else { return try keepOnlyRecord(of: plan.digest, store: store, resource: resource) }
        guard let digest = plan.digest, DigestAuthority.outlivesData(digest), manifest.expectedDigest != digest else {
            return
        }
        manifest.digestAlgorithm = digest.algorithm
        manifest.digestHex = digest.hex
        manifest.digestSource = digest.source
        try store.save(manifest, durable: options.syncOnCompletion)
    }

    func freshPlan(length: Int64) -> [Range<Int64>] {
        SegmentPlanner.plan(
            length: length,
            connections: options.plannedConnections,
            piecesPerConnection: options.piecesPerConnection
        )
    }

    /// Where checkpoints of a segmented download go, and what every one of them records besides the segments: for
    /// a repair pass, that it is under way and what it has rewritten so far.
    func checkpoints(
        for resource: RemoteResource,
        plan: TransferPlan,
        store: ManifestStore,
        repair: RepairingSink?
    ) -> TransferEngine.Checkpoints? {
        guard let length = resource.length else { return nil }
        let template = Manifest(
            url: URLUserinfo.removed(from: resource.requestedURL),
            resolvedURL: URLUserinfo.removed(from: resource.resolvedURL),
            length: length,
            etag: resource.etag,
            lastModified: resource.lastModified,
            digestAlgorithm: plan.digest?.algorithm,
            digestHex: plan.digest?.hex,
            digestSource: plan.digest?.source,
            bootID: BootID.current,
            segments: [],
            failedDigest: plan.failedDigest
        )
        guard let repair else { return TransferEngine.Checkpoints(store: store, template: template) }
        return TransferEngine.Checkpoints(store: store, template: template) { manifest in
            manifest.repair = Manifest.Repair(rewritten: repair.rewrittenRanges.map(Manifest.ByteRange.init))
        }
    }

    /// Checks the length always and the digest when one is known; a file of the wrong length is discarded, one
    /// that fails its digest is kept for a repair when it can be resumed (see `keepAfterMismatch`).
    func verify(
        _ file: PartFile,
        length: Int64,
        resource: RemoteResource,
        plan: TransferPlan,
        hasher: PrefixHasher?,
        repair: RepairingSink?,
        checkpoints: TransferEngine.Checkpoints?,
        paths: DestinationPaths
    ) throws(BraidError) {
        emit(.state(.verifying))
        if !plan.segmented { try file.resize(to: length) }
        let size = try file.currentSize()
        if let expected = resource.length, expected != length || size != expected {
            removePartialData(paths, keepingRecordOf: plan.digest, for: resource)
            throw BraidError.integrity(
                "length mismatch: expected \(expected) bytes, have \(size); the partial data was discarded")
        }
        hasher?.finish(totalLength: length)
        // The flush to disk overlaps the last of the hashing, which runs on the verifier's thread.
        if options.syncOnCompletion { try file.synchronize() }
        guard let expected = plan.digest, let hasher else { return }
        let actual = try hasher.waitForDigest()
        guard actual == expected.bytes else {
            throw keepAfterMismatch(
                file, expected: expected, actual: actual, plan: plan, repair: repair, checkpoints: checkpoints,
                resource: resource, paths: paths)
        }
    }

    /// Gives the finished file the server's modification time when asked to (`-R`), and with timestamping, so that
    /// the next run compares against it (wget -N). Through the descriptor, before the file takes its final name: it
    /// appears with the server's time.
    func setRemoteTime(of descriptor: FileDescriptor, resource: RemoteResource, shownAs path: AnchoredPath) {
        ReadWhole.setRemoteTime(of: descriptor, resource: resource, options: options, shownAs: path) {
            emit(.notice($0))
        }
    }

    /// Moves the verified file into place with the permissions of any new file, and forgets the manifest; a file at
    /// the final name is replaced only when `replacing`.
    private func commit(
        _ file: PartFile,
        paths: DestinationPaths,
        store: ManifestStore,
        resource: RemoteResource,
        replacing: Bool
    ) throws(BraidError) {
        guard file.isStill(at: paths.part) else {
            throw BraidError.localIO(
                "\(paths.part) was replaced by another file during the download; nothing was moved to \(paths.final)")
        }
        setRemoteTime(of: file.descriptor, resource: resource, shownAs: paths.part)
        // FILE.part was private while incomplete.
        try file.setPermissions(DestinationPaths.permissionsForNewFiles)
        do {
            try paths.moveIntoPlace(replacing: replacing)
        } catch {
            try? file.setPermissions(0o600)
            throw error
        }
        if options.syncOnCompletion { paths.final.synchronizeDirectory() }
        store.remove()
    }
}

extension DownloadResult {
    init(
        path: String,
        bytes: Int64,
        verifiedDigest: ExpectedDigest?,
        resumedBytes: Int64,
        seconds: Double,
        statistics: TransferMachine.Statistics
    ) {
        self.init(
            path: path,
            bytes: bytes,
            verifiedDigest: verifiedDigest,
            resumedBytes: resumedBytes,
            seconds: seconds,
            fetchedBytes: statistics.fetchedBytes,
            retries: statistics.retries,
            timeToFirstByte: statistics.timeToFirstByte,
            connections: statistics.connections
        )
    }
}
