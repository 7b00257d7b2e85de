import Logging
import SystemPackage

/// The transfer stage: the machine that decides it and the engine that performs it.
extension DownloadJob {
    /// How a transfer ended, what it cost, and how much of the file an earlier run had already fetched.
    struct TransferRun {
        var outcome: TransferMachine.Outcome
        var statistics: TransferMachine.Statistics
        var resumedBytes: Int64
        /// What the transfer wrote, and from which source (a cache peer, or the origin and its mirrors).
        var written: [TransferMachine.WrittenSpan] = []
    }

    /// Runs the transfer of `plan` into `file` (or, without one, into a sink that discards) until it completes,
    /// fails, restarts or is stopped; throws only when the file cannot be opened again to check its pieces.
    ///
    /// - Parameters:
    ///   - file: the partial file, synced for checkpoints marked durable; nil when the bytes are only counted.
    ///   - sink: where the bytes go when not straight into `file`, such as a repair pass's comparing sink.
    ///   - oneRequest: the whole file comes in the response adopted from the probe (`first`): one connection, no
    ///     count to choose or remember, no piece to check.
    func runTransfer(
        _ resource: RemoteResource,
        mirrors: [RemoteResource],
        plan: TransferPlan,
        file: PartFile?,
        sink: (any TransferSink)? = nil,
        hasher: PrefixHasher? = nil,
        checkpoints: TransferEngine.Checkpoints? = nil,
        stream: StreamSession? = nil,
        paths: DestinationPaths,
        adopting first: ParkedResponse? = nil,
        oneRequest: Bool = false
    ) throws(BraidError) -> TransferRun {
        let (plan, peers) = planWithCachePeers(plan, resource: resource)
        let divided = plan.segmented && !oneRequest
        // With automatic connections the slots are the ceiling, and the machine's policy sets how many run.
        let automatic = divided && options.automaticConnections
        let origin = Origin(url: resource.resolvedURL)
        let ceiling = options.maximumAutomaticConnections ?? ConnectionPolicy.defaultCeiling(host: origin?.host ?? "")
        let slots = !divided ? 1 : automatic ? ceiling : options.connections
        // What an earlier download from this server settled on, unless a rate limit makes more connections useless.
        let stats = automatic ? options.serverStatsPath.map { ServerStats(path: FilePath($0)) } : nil
        let remembered =
            limiter?.effectiveRate == nil
            ? origin.flatMap { stats?.entry(for: $0, now: ServerStats.now)?.learned } : nil
        // Spread over connections of their own, the segments run on the lane's pool for them, which cannot take the
        // probe's request over from the lane's: that one is given up, and its bytes asked for again.
        let segments =
            spreadsSegments(slots: slots, resources: [resource] + mirrors, givingUp: first) ? segmentPool?.take() : nil
        defer { if segments != nil { segmentPool?.give() } }
        let spreads = segments != nil
        let transferPool = segments ?? pool
        if spreads { first?.cancel() }
        let adopted = spreads ? nil : first
        let scheduler = segmentScheduler(for: plan, slots: slots, peers: peers, stream: stream)
        emit(.started(resource: resource, path: paths.finalPath.string, resumedBytes: scheduler.flushedBytes))
        emit(.state(.downloading))
        let syncer = checkpoints == nil ? nil : file.map(DurabilitySyncer.init(file:))
        syncer?.start()
        defer { syncer?.stop() }
        let requestOptions = self.requestOptions
        let machine = transferMachine(
            resource, mirrors: mirrors, plan: plan, scheduler: scheduler, slots: slots,
            adaptive: automatic
                ? ConnectionPolicy.Configuration(
                    initial: 8, checksFewerAtStart: true, stepHorizon: 2, shareHorizon: 1.5, distantStart: 24,
                    ceiling: ceiling, remembered: remembered)
                : nil,
            file: file, hasher: hasher, readsAhead: stream != nil, checkpoints: checkpoints, peers: peers,
            probe: first, adoptsProbe: adopted != nil)
        // Pieces are checked from the file, once written. A file that cannot be opened again is an error: a check
        // that cannot read its bytes must never pass them.
        let pieceReader = divided || plan.pieceHashes != nil || peers != nil ? try file?.openForReading() : nil
        let engine = TransferEngine(
            machine: machine,
            sink: sink ?? file ?? DiscardingSink(),
            configuration: TransferEngine.Configuration(
                machine: machine.configuration, requestOptions: requestOptions, logger: logger,
                refresher: { [self] source, abandoned in
                    renew(
                        source, options: requestOptions, usesRanges: plan.segmented, on: transferPool,
                        abandoned: abandoned)
                },
                cachePeers: peers?.requests ?? CachePeerRequests(), stream: stream?.feed),
            interrupter: interrupter,
            budget: budget,
            limiter: limiter,
            hasher: hasher,
            checkpoints: checkpoints,
            syncer: syncer,
            pieceReader: pieceReader,
            reports: TransferEngine.Reports(
                progress: { [emit] progress in emit(.progress(progress)) },
                retry: { [emit] reason, delay in emit(.retry(reason: reason, delay: delay)) },
                notice: { [emit] message in emit(.notice(message)) }
            ),
            pool: transferPool.driver,
            sharesPool: budget != nil && !spreads,
            besideSharedConnection: spreads,
            adopting: adopted
        )
        let outcome = engine.run()
        if let stats, let origin, let learned = engine.machine.policy?.learned, limiter?.effectiveRate == nil {
            remember(learned, of: origin, in: stats)
        }
        return TransferRun(
            outcome: outcome, statistics: engine.machine.statistics, resumedBytes: scheduler.flushedBytes,
            written: engine.machine.written)
    }

    /// Whether a manager's download fetching over `slots` connections from `resources` (the file and its mirrors)
    /// spreads its segments over connections of their own, on its lane's pool for them (`segmentPool`), rather than
    /// multiplexing them as streams of the lane's shared connections: where HTTP/2 would be spoken (an `https` URL,
    /// the version not forced). Over one connection, a cap the server or the network puts on each connection (a
    /// per-flow shaper, a congestion window on a lossy long path) would hold the whole file: 32 MiB behind a cap of
    /// 1 MiB/s on each connection took 33 s in a list so, against 5.1 s spread (`Benchmarks/per_connection_cap.py`).
    ///
    /// The response of the first request (`probe`, a stream of the lane's shared connection), when there is one
    /// waiting, is given up, and what it carried is asked for again: up to its first `oneRequestLength` bytes, which
    /// the server may have sent already. So such a file spreads only where that is at most a sixteenth of it;
    /// a smaller one stays on the shared connection, adopting the response. A lane that gives each of its requests
    /// a connection of its own (`StreamsPerConnection`) gives none of its pool for this (`SegmentPool.take()`): the
    /// segments then have connections of their own on the lane's pool.
    func spreadsSegments(slots: Int, resources: [RemoteResource], givingUp probe: ParkedResponse?) -> Bool {
        // Room for two connections of its own beside the lane's shared one, or spreading gains nothing.
        guard segmentPool != nil, slots > 1, options.httpVersion == .automatic, let budget,
            min(budget.maximumPerHost, budget.maximumConnections) >= 3
        else { return false }
        if probe != nil, (resources.first?.length ?? 0) < 16 * Self.oneRequestLength { return false }
        return resources.contains { EasyHandle.isHTTPS($0.resolvedURL) }
    }

    /// Who fetches which range of `plan` next, over `slots` connections: cut at slices for cache peers, and held
    /// within a window of a stream's reader.
    private func segmentScheduler(
        for plan: TransferPlan, slots: Int, peers: CachePeerSetup?, stream: StreamSession?
    ) -> SegmentScheduler {
        SegmentScheduler(
            ranges: plan.ranges,
            progress: plan.progress,
            connectionLimit: slots,
            retryPolicy: options.retryPolicy,
            verified: plan.verified,
            pieceAlignment: plan.pieceHashes?.pieceLength,
            sliceSize: peers?.router.sliceSize,
            window: stream.flatMap { stream in
                plan.segmented
                    ? SegmentScheduler.Window(size: stream.options.window, from: stream.feed.base, connections: slots)
                    : nil
            }
        )
    }

    /// Keeps what an automatic count settled on for `origin`'s next download; a failure costs only that.
    private func remember(_ learned: ConnectionPolicy.Learned, of origin: Origin, in stats: ServerStats) {
        do throws(BraidError) {
            try stats.record(learned, for: origin, now: ServerStats.now)
        } catch {
            logger.info("cannot remember \(origin)'s connections: \(error)")
        }
    }

    /// The machine that decides the transfer of `plan` from `resource` and its `mirrors` over `slots` connections;
    /// `adaptive` chooses how many of them run, when the count is automatic.
    private func transferMachine(
        _ resource: RemoteResource,
        mirrors: [RemoteResource],
        plan: TransferPlan,
        scheduler: SegmentScheduler,
        slots: Int,
        adaptive: ConnectionPolicy.Configuration?,
        file: PartFile?,
        hasher: PrefixHasher?,
        readsAhead: Bool,
        checkpoints: TransferEngine.Checkpoints?,
        peers: CachePeerSetup?,
        probe: ParkedResponse?,
        adoptsProbe: Bool
    ) -> TransferMachine {
        var sources = ([resource] + mirrors).map { Source(resource: $0, usesRanges: plan.segmented) }
        // The probe's head tells whether the origin's responses carry a Content-Digest: the first requests are then
        // not cut short by steals, before their own heads say so (a response cut short could not be checked).
        sources[0].servesContentDigests = probe?.headers.status == 206 && probe?.headers["content-digest"] != nil
        return TransferMachine(
            resource: resource,
            sources: sources + (peers?.sources ?? []),
            scheduler: scheduler,
            configuration: TransferMachine.Configuration(
                usesRanges: plan.segmented,
                slots: slots,
                sharesConnections: budget != nil,
                keepsCheckpoints: checkpoints != nil,
                writesBackSegments: checkpoints != nil && options.syncOnCompletion,
                durableInterval: options.durableCheckpointInterval,
                randomSeed: .random(in: 0...UInt64.max),
                renewsURLs: plan.segmented,
                adaptiveConnections: adaptive,
                // A cache peer serves whole slices: requests keep the plan's slices rather than join them.
                sizesPieces: plan.segmented && peers == nil,
                probeFirstByte: adoptsProbe ? probe?.firstByteSeconds : nil,
                probeRange: adoptsProbe ? probe?.range : nil,
                pieceHashes: plan.pieceHashes,
                checksContentDigests: plan.segmented && file != nil,
                hashesAhead: (hasher != nil || readsAhead) && plan.pieceHashes == nil && plan.repairing == nil
            ),
            peers: peers?.router
        )
    }

    /// Follows `source`'s URL as given again, redirects and all, as the probe did: a signed URL it redirected to
    /// may have expired. The machine decides whether what it finds is the same file; once the transfer no longer
    /// wants the answer (`abandoned`), it gives up.
    private func renew(
        _ source: Source,
        options requestOptions: RequestOptions,
        usesRanges: Bool,
        on pool: TransferPool,
        abandoned: @escaping @Sendable () -> Bool
    ) -> Result<Source, BraidError> {
        var prober = Prober(
            options: requestOptions,
            pool: pool,
            retryPolicy: options.retryPolicy,
            onRetry: { [emit] reason, delay in emit(.retry(reason: reason, delay: delay)) },
            onNotice: { [emit] message in emit(.notice(message)) },
            isCancelled: { [interrupter] in interrupter.isEnding || abandoned() }
        )
        prober.multiplexes = !usesRanges
        prober.requestLog = requestLog
        do throws(BraidError) {
            let resource = try prober.probe(source.resource.requestedURL)
            return .success(Source(resource: resource, usesRanges: usesRanges))
        } catch {
            return .failure(error)
        }
    }
}
