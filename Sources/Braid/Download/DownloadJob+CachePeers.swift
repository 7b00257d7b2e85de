/// Cache peers in a download: refused at the start when nothing could vouch for what they serve, asked for the
/// file's slices during the transfer, and, when the whole-file digest fails, the bytes no origin sent in this run
/// fetched again from the origin to rewrite only those that differ.
///
/// Design: `docs/design/cache-peers.md`.
extension DownloadJob {
    /// What a transfer needs to ask cache peers: the router, one source per peer, and how the engine reaches them.
    struct CachePeerSetup {
        var router: CachePeerRouter
        var sources: [Source]
        var requests: CachePeerRequests
    }

    /// Refuses, before the partial file is made, a download whose cache peers nothing could check: no digest is
    /// offered (by the user, a checksum file, a Metalink or the server), none is recorded by an earlier run, and
    /// there are no piece hashes, unless the user trusts the peers.
    func refuseUnverifiableCachePeers(
        _ resource: RemoteResource,
        offered: [ExpectedDigest],
        store: ManifestStore
    ) throws(BraidError) {
        guard !options.cachePeers.isEmpty, !options.trustsCachePeers, !options.measures, resource.isSegmentable,
            offered.isEmpty, options.pieceHashes == nil
        else { return }
        if let recorded = try? store.load(), recorded.belongs(to: url), recorded.expectedDigest != nil { return }
        throw BraidError(
            .usage,
            "cache peers cannot be verified: neither the origin nor you give a digest of "
                + "\(PrintableText.sanitised(URLUserinfo.removed(from: resource.requestedURL))), so bytes a cache "
                + "sent could not be checked",
            remedies: [.expectDigest, .trustCachePeers],
            option: .cachePeers
        )
    }

    /// The cache peers to ask for `plan`'s slices of `resource`; nil when the transfer asks none: without peers,
    /// for a single stream or a repair pass (which compares with the origin's bytes), or when nothing could vouch
    /// for them.
    func cachePeerSetup(_ resource: RemoteResource, plan: TransferPlan) -> CachePeerSetup? {
        guard !options.cachePeers.isEmpty, plan.segmented, plan.repairing == nil, !options.measures,
            plan.pieceHashes != nil || plan.digest != nil || options.trustsCachePeers,
            let identity = CachePeer.resourceIdentity(of: resource.resolvedURL)
        else { return nil }
        guard let unit = Self.sliceUnit(options.sliceSize, pieceLength: plan.pieceHashes?.pieceLength) else {
            emit(
                .notice(
                    "not using cache peers: slices of \(options.sliceSize) bytes and pieces of "
                        + "\(plan.pieceHashes?.pieceLength ?? 0) bytes share no boundary below 4 GiB"))
            return nil
        }
        let router = CachePeerRouter(
            resource: identity, sliceSize: unit, peers: options.cachePeers.map { ($0.template, $0.name) })
        let sources = options.cachePeers.enumerated().map { index, peer in
            Source(peer: index, host: Origin(url: peer.base)?.host ?? "", serving: resource)
        }
        return CachePeerSetup(
            router: router, sources: sources,
            requests: CachePeerRequests(peers: options.cachePeers, downloadOptions: requestOptions))
    }

    /// The bytes one peer serves as one request: the slice, or with piece hashes the least common multiple of the
    /// slice and the piece, so that every request holds whole pieces; nil when that is over 4 GiB.
    static func sliceUnit(_ sliceSize: Int64, pieceLength: Int64?) -> Int64? {
        guard let pieceLength, pieceLength > 0 else { return sliceSize }
        var (a, b) = (sliceSize, pieceLength)
        while b != 0 { (a, b) = (b, a % b) }
        let (unit, overflow) = (sliceSize / a).multipliedReportingOverflow(by: pieceLength)
        return overflow || unit > DownloadOptions.sliceSizes.upperBound ? nil : unit
    }

    /// `plan` with its ranges cut at every multiple of `unit`, so that no segment spans two peers' slices; nil
    /// when that would make more segments than a manifest holds. A plan with nothing done yet becomes one segment
    /// per slice: the ramp of small first segments that suits one origin would put every connection on the first
    /// slice, all waiting for one cache to fetch it, while the other slices' caches sat idle.
    static func sliced(_ plan: TransferPlan, every unit: Int64) -> TransferPlan? {
        guard let first = plan.ranges.first, let last = plan.ranges.last else { return plan }
        let fresh = plan.progress.allSatisfy { $0 == 0 } && (plan.verified ?? []).allSatisfy { $0 == 0 }
        let cut =
            fresh
            ? SegmentPlanner.cut(
                [first.lowerBound..<last.upperBound], progress: plan.progress.isEmpty ? [] : [0],
                verified: plan.verified == nil ? nil : [0], every: unit)
            : SegmentPlanner.cut(plan.ranges, progress: plan.progress, verified: plan.verified, every: unit)
        guard cut.ranges.count <= Manifest.maximumSegments else { return nil }
        var plan = plan
        (plan.ranges, plan.progress, plan.verified) = (cut.ranges, cut.progress, cut.verified)
        return plan
    }

    /// What to do after the whole-file digest failed with cache peers in use: nil when there is nothing to fetch
    /// again (every byte came from the origin in this run, or no peer was asked); else a repair pass over the bytes
    /// no origin sent in this run (what peers sent, and what an earlier run left), fetched from the origin only,

    /// How a repair from the origin ended: the file verified with its sink, or the pass not finished.
    enum OriginRepair {
        case repaired(RepairingSink)
        case unfinished(AttemptOutcome)
    }

    /// After the whole-file digest failed (`mismatch`): fetches again from the origin the bytes cache peers served
    /// (or no origin vouched for), rewrites only those that differ, names the peers that sent them, and verifies
    /// again. Nil when there is nothing to fetch again, so that the mismatch stands.
    func repairFromOrigin(
        after mismatch: BraidError,
        transfer: TransferRun,
        plan: TransferPlan,
        resource: RemoteResource,
        mirrors: [RemoteResource],
        file: PartFile,
        store: ManifestStore,
        paths: DestinationPaths,
        length: Int64,
        lifecycle: inout DownloadLifecycle
    ) throws(BraidError) -> OriginRepair? {
        guard
            let pass = try peerRepairPass(
                after: mismatch, written: transfer.written, plan: plan, resource: resource, store: store, file: file)
        else { return nil }
        pass.hasher.start()
        defer { pass.hasher.stop() }
        let checkpoints = self.checkpoints(for: resource, plan: pass.plan, store: store, repair: pass.sink)
        if let checkpoints { try beginPeerRepair(pass, checkpoints: checkpoints) }
        let repair = try runTransfer(
            resource, mirrors: mirrors, plan: pass.plan, file: file, sink: pass.sink, hasher: pass.hasher,
            checkpoints: checkpoints, paths: paths)
        lifecycle.record(repair.statistics)
        guard case .completed = repair.outcome else {
            return .unfinished(
                try unfinished(
                    repair.outcome, plan: pass.plan, resumable: checkpoints != nil, resource: resource, paths: paths,
                    file: file, store: store))
        }
        reportPeersThatDiffered(pass, rewritten: pass.sink.rewrittenRanges)
        try verify(
            file, length: length, resource: resource, plan: pass.plan, hasher: pass.hasher, repair: pass.sink,
            checkpoints: checkpoints, paths: paths)
        return .repaired(pass.sink)
    }

    /// of which only the bytes that differ are rewritten.
    func peerRepairPass(
        after mismatch: BraidError,
        written: [TransferMachine.WrittenSpan],
        plan: TransferPlan,
        resource: RemoteResource,
        store: ManifestStore,
        file: PartFile
    ) throws(BraidError) -> PeerRepairPass? {
        guard !options.cachePeers.isEmpty, plan.repairing == nil, mismatch.remedies.contains(.repair),
            let length = resource.length, let digest = plan.digest
        else { return nil }
        let unvouched = Self.complement(of: written.filter { $0.peer == nil }.map(\.range), in: 0..<length)
        guard !unvouched.isEmpty else { return nil }
        let bytes = unvouched.reduce(Int64(0)) { $0 + Int64($1.count) }
        emit(
            .notice(
                "the file does not match its digest: fetching the \(Formatting.bytes(bytes)) that cache peers "
                    + "served (or an earlier run wrote) from the origin, to rewrite only the bytes that differ"))
        var ranges: [Range<Int64>] = []
        var progress: [Int64] = []
        var position: Int64 = 0
        for range in unvouched {
            if range.lowerBound > position {
                ranges.append(position..<range.lowerBound)
                progress.append(range.lowerBound - position)
            }
            ranges.append(range)
            progress.append(0)
            position = range.upperBound
        }
        if position < length {
            ranges.append(position..<length)
            progress.append(length - position)
        }
        let failed = (try? store.load())?.failedDigest
        let pass = TransferPlan(
            ranges: ranges, progress: progress, segmented: true, digest: digest, failedDigest: failed,
            repairing: [])
        let sink = RepairingSink(file: file)
        let hasher = PrefixHasher(algorithm: digest.algorithm, reading: try file.openForReading())
        return PeerRepairPass(plan: pass, sink: sink, hasher: hasher, peerSpans: written.filter { $0.peer != nil })
    }

    /// A repair pass over the bytes no origin vouched for.
    struct PeerRepairPass {
        var plan: TransferPlan
        var sink: RepairingSink
        var hasher: PrefixHasher
        /// What each peer sent in the pass before, to name those whose bytes differed.
        var peerSpans: [TransferMachine.WrittenSpan]
    }

    /// Records, before the pass compares its first byte, that a repair pass is under way with the origin's bytes
    /// already vouched for: a run that resumes it fetches only what is left.
    func beginPeerRepair(_ pass: PeerRepairPass, checkpoints: TransferEngine.Checkpoints) throws(BraidError) {
        var manifest = checkpoints.template
        manifest.bootID = BootID.current
        manifest.segments = zip(pass.plan.ranges, pass.plan.progress).map { range, done in
            Manifest.Segment(start: range.lowerBound, end: range.upperBound, done: done, durable: done)
        }
        checkpoints.annotate?(&manifest)
        try checkpoints.store.save(manifest, durable: true)
    }

    /// The notices naming the cache peers whose bytes differed from the origin's, after a repair pass rewrote
    /// `rewritten`.
    func reportPeersThatDiffered(_ pass: PeerRepairPass, rewritten: [Range<Int64>]) {
        var reported = Set<Int>()
        for span in pass.peerSpans {
            guard let peer = span.peer, !reported.contains(peer) else { continue }
            let differing = rewritten.compactMap { range -> Range<Int64>? in
                let start = max(range.lowerBound, span.range.lowerBound)
                let end = min(range.upperBound, span.range.upperBound)
                return start < end ? start..<end : nil
            }
            guard !differing.isEmpty else { continue }
            reported.insert(peer)
            let shown = differing.prefix(10).map { "\($0.lowerBound)-\($0.upperBound - 1)" }.joined(separator: ", ")
            emit(
                .notice(
                    "cache peer \(options.cachePeers[peer].name) served bytes \(shown) that differ from the "
                        + "origin's; they were rewritten from the origin"))
        }
    }

    /// The parts of `whole` that none of `ranges` covers, in order.
    static func complement(of ranges: [Range<Int64>], in whole: Range<Int64>) -> [Range<Int64>] {
        var gaps: [Range<Int64>] = []
        var position = whole.lowerBound
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if range.lowerBound > position { gaps.append(position..<min(range.lowerBound, whole.upperBound)) }
            position = max(position, range.upperBound)
            if position >= whole.upperBound { break }
        }
        if position < whole.upperBound { gaps.append(position..<whole.upperBound) }
        return gaps.filter { !$0.isEmpty }
    }
}

extension DownloadJob {
    /// `plan` as the transfer runs it, with the cache peers it asks: cut at their slices, or as it is without
    /// peers (or when the cuts would make more segments than a manifest holds).
    func planWithCachePeers(_ plan: TransferPlan, resource: RemoteResource) -> (TransferPlan, CachePeerSetup?) {
        guard let setup = cachePeerSetup(resource, plan: plan) else { return (plan, nil) }
        guard let sliced = Self.sliced(plan, every: setup.router.sliceSize) else {
            emit(.notice("not using cache peers: slices of \(setup.router.sliceSize) bytes are too many for one file"))
            return (plan, nil)
        }
        return (sliced, setup)
    }
}
