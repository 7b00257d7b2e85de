/// Cache peers: each slice of the file is asked of the peer `CachePeerRouter` picks for it, whole, so that the
/// cache stores the request its fleet makes; a peer that fails or serves something else gives its slices to the
/// next one and then to the origin, without any of its failures counting against the download.
///
/// What a peer sent counts like anything else once it is written: piece hashes check it as they check every
/// source, and the whole-file digest covers it; `written` remembers which bytes came from peers, so that a
/// whole-file mismatch fetches those again from the origin (`DownloadJob.repairPeerBytes`).
///
/// Design: `docs/design/cache-peers.md`.
extension TransferMachine {
    /// Bytes this run wrote from one source.
    struct WrittenSpan: Equatable, Sendable {
        var range: Range<Int64>
        /// The cache peer that sent them (its index in the router), or nil for the origin or a mirror.
        var peer: Int?
    }

    /// Whether `source` is the origin or one of its mirrors, not a cache peer.
    func isOrigin(_ source: Int) -> Bool {
        sources[source].peer == nil
    }

    /// The source of the cache peer that serves segment `index` now, or nil when the origin does: without peers,
    /// without ranges, when each peer of its slice is down or skipped, or when bytes a peer sent for it failed
    /// their digest (it is then the origin's alone).
    func cachePeerSource(for index: Int) -> Int? {
        guard let peers, configuration.usesRanges else { return nil }
        if let avoided = avoidedSource[index], !isOrigin(avoided) { return nil }
        let segment = scheduler.segments[index]
        guard let peer = peers.route(offset: segment.start + segment.flushed, now: now) else { return nil }
        return sources.firstIndex { $0.peer == peer && $0.alive }
    }

    /// The request for the rest of segment `index` from a cache peer: its whole slice, so that every host asks
    /// the cache the same request, of which the bytes before the segment's next one are dropped.
    func peerRequest(forSegment index: Int) -> TransferRequest {
        guard let peers else { preconditionFailure("Invalid state: a peer's request without peers") }
        let segment = scheduler.segments[index]
        let position = segment.start + segment.flushed
        let slice = peers.sliceRange(containing: position, totalLength: resource.length ?? scheduler.totalLength)
        return TransferRequest(
            range: position..<segment.end, skip: position - slice.lowerBound, ranged: true,
            asked: slice.lowerBound..<max(slice.upperBound, segment.end))
    }

    /// Remembers what `attempt` left written in the file, and from which source.
    mutating func recordWritten(by attempt: Attempt) {
        let segment = scheduler.segments[attempt.segment]
        let range = attempt.request.range.lowerBound..<(segment.start + segment.flushed)
        guard !range.isEmpty, attempt.request.ranged else { return }
        let span = WrittenSpan(range: range, peer: sources[attempt.source].peer)
        if let last = written.last, last.peer == span.peer, last.range.upperBound == range.lowerBound {
            written[written.count - 1].range = last.range.lowerBound..<range.upperBound
        } else {
            written.append(span)
        }
    }

    /// A cache peer's request ended while the transfer runs: nil when it served its bytes as asked (the segment
    /// then completes as any other); else its segment waits for the next connection, without a failure counted,
    /// and the peer is skipped for this file (it served another version or length) or down for a while (it
    /// refused, stalled or errored). What it wrote before failing stays, and is checked like the rest.
    mutating func peerAttemptEnded(_ attempt: Attempt, result: TransferResult, now: Double) -> [Action]? {
        guard let peer = sources[attempt.source].peer, var router = peers, attempt.writeError == nil else {
            return nil
        }
        let segment = scheduler.segments[attempt.segment]
        let complete = segment.flushed >= segment.length
        enum Problem {
            case skip(String)
            case down(String)
        }
        let problem: Problem?
        switch attempt.verdict {
        case .reachedEnd: problem = nil
        case let .remoteChanged(message), let .lengthDisagrees(message): problem = .skip(message)
        case .rangesIgnored: problem = .skip("it answered a range request with a whole file (HTTP 200)")
        case let .failure(kind): problem = .down(kind.message)
        case nil:
            switch result {
            case .finished, .aborted: problem = complete ? nil : .down("its response ended early")
            case let .failed(failure): problem = .down(FailureKind.classify(failure).message)
            }
        }
        guard let problem else {
            router.served(by: peer)
            peers = router
            return nil
        }
        let confirms = configuration.pieceHashes == nil
        scheduler.requeue(segment: attempt.segment, now: now, confirms: confirms)
        var actions: [Action] = []
        if scheduler.segments[attempt.segment].state == .verifying {
            actions.append(.verify(segment: attempt.segment, checks: pieceChecks(of: attempt.segment)))
        }
        let name = router.peers[peer].name
        switch problem {
        case let .skip(reason):
            if router.skip(peer, because: reason) {
                sources[attempt.source].alive = false
                actions.append(.notice("not using cache peer \(name) for this file: \(reason)"))
            }
        case let .down(reason):
            if let backoff = router.failed(peer, now: now) {
                let seconds = Formatting.fixed(backoff, digits: 0)
                actions.append(
                    .notice(
                        "cache peer \(name) failed (\(reason)); its slices go to the next peer or the origin "
                            + "for \(seconds) s"))
            }
        }
        peers = router
        return actions
    }

    /// Bytes a cache peer sent failed their piece digest: the peer is not asked again for this file, and those
    /// bytes are fetched again from the origin (`cachePeerSource(for:)` gives them none).
    mutating func peerServedBadBytes(source: Int, ranges: [Range<Int64>]) -> [Action] {
        guard let peer = sources[source].peer, var router = peers else { return [] }
        let shown = ranges.map { "\($0.lowerBound)-\($0.upperBound - 1)" }.joined(separator: ", ")
        let reason = "bytes \(shown) it served did not match their digest"
        defer { peers = router }
        guard router.skip(peer, because: reason) else { return [] }
        sources[source].alive = false
        return [
            .notice(
                "cache peer \(router.peers[peer].name) served bytes \(shown) that do not match their digest: "
                    + "fetching them from the origin, and not using that peer for this file")
        ]
    }

    /// How messages name a source: a cache peer by its scheme, host and port; the origin or a mirror by its URL
    /// as given.
    func sourceName(_ source: Int) -> String {
        if let peer = sources[source].peer, let peers { return "cache peer \(peers.peers[peer].name)" }
        return PrintableText.sanitised(URLUserinfo.removed(from: sources[source].resource.requestedURL))
    }
}
