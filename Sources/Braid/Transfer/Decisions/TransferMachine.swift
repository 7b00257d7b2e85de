/// Every decision of one transfer, as a pure value: events come in as mutating calls, each returning the actions
/// to perform; `TransferEngine` turns libcurl's callbacks and its timers into events and performs the actions,
/// deciding nothing itself. Time and randomness are passed in, so every decision is tested event by event, without
/// a network. Its life is `State`.
///
/// What it decides: `docs/design/transfer.md#fetch-decisions-and-their-execution`.
struct TransferMachine {
    struct Configuration: Sendable {
        /// Fetch `Range`s (a segmented, resumable download) or the whole body in one stream.
        var usesRanges: Bool
        /// Connection slots: at most this many transfers at once.
        var slots: Int
        /// Whether each connection is first reserved from a budget shared with other downloads.
        var sharesConnections = false
        /// Whether progress is saved to a manifest (and synced to disk) as the transfer goes.
        var keepsCheckpoints = false
        /// Whether each completed segment is sent on its way to disk at once (`writeBack`), so that the flush before
        /// the rename has little left to do. Without that flush (`--no-fsync`) it would only take CPU and disk time
        /// from the transfer, for bytes the system writes back in its own time.
        var writesBackSegments = false
        var checkpointInterval = 0.1
        var durableInterval = 5.0
        var progressInterval = 0.25
        /// Seeds the jitter of retry delays.
        var randomSeed: UInt64 = 0
        /// Whether a range request refused with 401, 403, 404 or 410 after the probe succeeded has its source's
        /// URL as given followed again (a signed URL that expired), rather than ending the download.
        var renewsURLs = false
        /// Chooses the number of connections while the transfer runs (`-n auto`), up to `slots`; nil keeps
        /// `slots` connections.
        var adaptiveConnections: ConnectionPolicy.Configuration?
        /// Whether a fixed count sizes its requests from what they cost (`PieceSizer`): the plan's pieces joined where
        /// first bytes are slow, and with one connection, the remainder in one request. Off, each request fetches
        /// one of the plan's pieces (an adaptive count sizes them through its policy either way).
        var sizesPieces = false
        /// The seconds the probe's response took to its first byte, when the transfer begins with that response: what
        /// a request costs is known before the first requests are sized.
        var probeFirstByte: Double?
        /// The bytes of the file the probe's `206` carries, from byte 0 (`bytes=0-`), when the transfer begins with
        /// it: the first request, sized as any other, asks for them all (`TransferRequest.asked`) and keeps its own
        /// range of them, so that the executor adopts that response for it and ends it once the range is received.
        var probeRange: Range<Int64>?
        /// Digests of the file's pieces: each segment's pieces are checked once it is written, and a bad piece is
        /// fetched again alone. Segments are then made of whole pieces.
        var pieceHashes: PieceHashes?
        /// Whether a `206` response's `Content-Digest` (RFC 9530) is checked before its bytes count as done.
        var checksContentDigests = false
        /// Whether the whole-file digest may read ahead of confirmed bytes (`hashAhead`), told to forget them
        /// (`rewind`) when an attempt is thrown away: where no piece digest or repair rewrites bytes otherwise.
        var hashesAhead = false
    }

    enum State: Equatable {
        /// Not started: → `running` on `start(now:)`.
        case idle
        /// Requests run: → `ending(outcome)` once every segment is complete, a failure cannot be retried, the
        /// remote file turns out to be another, or a stop is requested; every active transfer is aborted.
        case running(Running)
        /// The aborted transfers are ending: → `finishing` when the last one has, with the final checkpoint to save
        /// (or straight to `finished` when the transfer keeps no checkpoints).
        case ending(Outcome)
        /// The final checkpoint is being saved; `retried` once the reserve was given back for a second try:
        /// → `finished` once it is saved, or failed twice.
        case finishing(Outcome, retried: Bool)
        /// Final: its outcome was emitted as `finish`.
        case finished(Outcome)
    }

    /// What only a running transfer keeps: when the next checkpoint, sync and progress report fall due, and where
    /// it stands with the shared connection budget.
    struct Running: Equatable {
        var nextCheckpoint: Double
        var nextDurable: Double
        var nextProgress: Double
        /// The slot and source waiting for the answer to `reserveConnection`.
        var pendingReservation: Reservation?
        /// Whether the budget refused a connection since the last tick: ask again only then.
        var reservationRefused = false
    }

    /// A connection asked of the shared budget, for `slot` to fetch from `source`.
    struct Reservation: Equatable {
        var slot: Int
        var source: Int
    }

    /// How a transfer ended.
    enum Outcome: Equatable {
        case completed(length: Int64)
        case remoteChanged(String)
        case rangesIgnored
        case lengthDisagrees(String)
        case failed(BraidError)
        case stopped(StopReason)

        static func == (left: Outcome, right: Outcome) -> Bool {
            switch (left, right) {
            case let (.completed(a), .completed(b)): a == b
            case let (.remoteChanged(a), .remoteChanged(b)): a == b
            case (.rangesIgnored, .rangesIgnored): true
            case let (.lengthDisagrees(a), .lengthDisagrees(b)): a == b
            case let (.failed(a), .failed(b)):
                a.code == b.code && a.message == b.message && a.httpStatus == b.httpStatus
            case let (.stopped(a), .stopped(b)): a == b
            default: false
            }
        }
    }

    /// What the executor must do.
    enum Action: Equatable {
        /// Ask the shared budget for a connection to `source`; answer with `connectionReserved`.
        case reserveConnection(source: Int)
        /// Give back a connection reserved for `source`.
        case releaseConnection(source: Int)
        /// Follow `source`'s URL as given again, redirects and all, for a fresh URL to the same file; answer with
        /// `sourceRefreshed`. No request starts on `source` meanwhile.
        case refreshSource(source: Int)
        /// Start a request on `slot` to `source`, writing what arrives from `request.range.lowerBound` on.
        case start(slot: Int, source: Int, request: TransferRequest)
        /// Another connection took over the rest of the segment: `slot` writes nothing at or past `end`.
        case shrink(slot: Int, end: Int64)
        /// Stop the transfer on `slot` (at once, or by refusing its next bytes) and report it ended.
        case abort(slot: Int)
        /// Set aside the disk reserve the final checkpoint may need on a full disk.
        case createReserve
        /// Give the reserve back, so that a checkpoint can be written on a full disk.
        case releaseReserve
        /// Write every connection's buffered bytes to the file; answer with `buffersFlushed`.
        case flushBuffers
        /// Save the manifest with these segments; answer with `checkpointSaved` or `checkpointFailed`.
        case checkpoint(segments: [Manifest.Segment], durable: Bool)
        /// Sync the file to disk on the syncer's thread; these flushed marks become durable when it completes.
        case sync(marks: [Int64])
        /// Start writing a completed range to disk without waiting.
        case writeBack(Range<Int64>)
        /// The verifier may read the file up to `upTo`: those bytes are confirmed and never written again.
        case confirm(upTo: Int64)
        /// The whole-file digest may read ahead up to `upTo`: written in order, not yet confirmed.
        case hashAhead(upTo: Int64)
        /// What the digest read ahead from `to` on is thrown away: those bytes will be written again.
        case rewind(to: Int64)
        /// Check the written bytes of `segment` against these digests; answer with `piecesVerified`.
        case verify(segment: Int, checks: [PieceCheck])
        case progress(DownloadProgress)
        /// A failed request will be tried again after `delay` seconds.
        case retry(reason: String, delay: Double)
        case notice(String)
        /// The transfer is over; nothing follows.
        case finish(Outcome)
    }

    /// One connection slot: free, or carrying one request.
    enum Slot: Equatable {
        case idle
        case busy(Attempt)
    }

    /// A request in flight and what is known of its response.
    struct Attempt: Equatable {
        var segment: Int
        var source: Int
        var request: TransferRequest
        /// The source's `generation` when the request started: which of its URLs it went to.
        var generation = 0
        /// The response head's status, once it arrived.
        var status = 0
        /// Whether the response shares its connection with others (`ResponseHeaders.isMultiplexed`).
        var multiplexed = false
        /// Whether the response head was accepted, so its body is being written.
        var accepted = false
        /// Why the attempt is being stopped, once that is decided.
        var verdict: ResponseCheck.Verdict?
        /// The error writing its bytes failed with, if it did.
        var writeError: BraidError?
        /// When the request was sent.
        var startedAt: Double = 0
        /// The `Content-Digest` of the response's content, which its bytes are checked against.
        var contentDigest: ExpectedDigest?
        /// The source whose connection the shared budget granted: `source`, or the origin for a cache peer's.
        var heldSource: Int
        /// Where the response's bytes end when the server sent fewer than asked (`ResponseCheck.servedEnd`).
        var servedEnd: Int64?

        static func == (left: Attempt, right: Attempt) -> Bool {
            left.segment == right.segment && left.source == right.source && left.request == right.request
                && left.heldSource == right.heldSource
                && left.generation == right.generation
                && left.status == right.status && left.multiplexed == right.multiplexed
                && left.accepted == right.accepted && left.verdict == right.verdict
                && left.writeError?.code == right.writeError?.code
                && left.writeError?.message == right.writeError?.message
                && left.contentDigest == right.contentDigest && left.servedEnd == right.servedEnd
        }
    }

    /// What one run cost: bytes received from the network, retries, and when the first body byte arrived.
    struct Statistics: Equatable {
        var fetchedBytes: Int64
        var retries: Int
        var timeToFirstByte: Double?
        /// The number of connections an adaptive transfer settled on; nil for a fixed count.
        var connections: Int? = nil
        /// Of `fetchedBytes`, those cache peers sent.
        var peerBytes: Int64 = 0
    }

    let configuration: Configuration
    /// What the probe learnt about the URL the user gave.
    let resource: RemoteResource
    // Internal rather than private only for the extensions in `TransferMachine+Attempts.swift`.
    var state = State.idle
    var scheduler: SegmentScheduler
    /// The URL and its mirrors; connections spread over the ones still alive.
    var sources: [Source]
    var slots: [Slot]
    /// The slots whose connection had a response accepted since it last stood idle (a busy slot's accepted attempt
    /// included): one between two requests still counts as receiving for the adaptive count, which waits for new
    /// connections, not for the next piece.
    var answered: [Bool]
    var jitter: SplitMix64
    var now: Double = 0
    var firstByteAt: Double?
    var receivedTotal: Int64 = 0
    var retries = 0
    /// The source each segment was last fetched from, and the one a segment that failed its digest avoids.
    var lastSource: [Int: Int] = [:]
    var avoidedSource: [Int: Int] = [:]
    /// Chooses the connection count, when it adapts.
    var policy: ConnectionPolicy?
    /// Which cache peer serves each slice, and how the peers behaved; nil without peers.
    var peers: CachePeerRouter?
    /// Bytes cache peers sent.
    var receivedFromPeers: Int64 = 0
    /// What this run wrote into the file and from which source, merged, in the order written: the bytes that
    /// peers served, and those no origin vouched for, are fetched again if the whole-file digest fails.
    var written: [WrittenSpan] = []
    /// Sizes the requests of a fixed count, when it does (`Configuration.sizesPieces`).
    var sizer: PieceSizer?
    /// Whether the next request started may be the probe's response (`Configuration.probeRange`).
    private var adoptsProbe = false

    private var startedAt: Double = 0
    private var resumedBytes: Int64 = 0
    private var speed = SpeedMeter()
    /// How far the verifier has been told it may read.
    private(set) var confirmedUpTo: Int64 = 0
    /// How far the digest was last told it may read ahead.
    var hashedAheadUpTo: Int64 = 0
    private var lastCheckpointed: Int64 = 0
    /// The flushed marks of the sync in flight, lowered for a segment whose bytes were thrown away meanwhile
    /// (what replaces them was written after the sync began).
    var syncMarks: [Int64]?

    /// - Parameter peers: the cache peers, when there are some: `sources` ends with one per peer
    ///   (`Source(peer:host:serving:)`), after the origin and its mirrors.
    init(
        resource: RemoteResource,
        sources: [Source],
        scheduler: SegmentScheduler,
        configuration: Configuration,
        peers: CachePeerRouter? = nil
    ) {
        precondition(sources.contains { $0.peer == nil }, "a transfer needs an origin")
        self.resource = resource
        self.sources = sources
        self.scheduler = scheduler
        self.configuration = configuration
        slots = Array(repeating: .idle, count: max(1, configuration.slots))
        answered = Array(repeating: false, count: slots.count)
        jitter = SplitMix64(seed: configuration.randomSeed)
        self.peers = peers
    }

    // MARK: Queries

    var statistics: Statistics {
        Statistics(
            fetchedBytes: receivedTotal - resumedBytes,
            retries: retries,
            timeToFirstByte: firstByteAt.map { $0 - startedAt },
            connections: policy?.settled,
            peerBytes: receivedFromPeers
        )
    }

    var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// Whether requests still start: not yet ending.
    var isRunning: Bool {
        if case .running = state { return true }
        return false
    }

    /// How long the executor may wait for the network before the machine wants a `tick`.
    func pollTimeout(now: Double) -> Double {
        // Only a retry coming due soon shortens the wait; work that is due but cannot start (the shared budget
        // refused a connection) waits for the next tick like everything else.
        guard scheduler.activeCount == 0, let retryAt = scheduler.nextRetryTime, retryAt > now else { return 0.1 }
        return min(0.1, max(0.001, retryAt - now))
    }

    /// The progress as the user sees it now.
    mutating func progress(now: Double) -> DownloadProgress {
        speed.record(bytes: receivedTotal, at: now)
        return DownloadProgress(
            // Bytes of the file, not of the network: an attempt thrown away does not count twice.
            downloadedBytes: scheduler.segments.reduce(0) { $0 + $1.received },
            // What this run fetches: the whole file, or the first bytes of it when the plan covers only those.
            totalBytes: resource.length.map { min($0, scheduler.totalLength) },
            bytesPerSecond: speed.bytesPerSecond,
            activeConnections: scheduler.activeCount,
            targetConnections: policy?.target,
            connectionsReason: policy.map { "\($0.reason)" },
            retries: retries,
            peerBytes: peers == nil ? nil : receivedFromPeers,
            originBytes: peers == nil ? nil : receivedTotal - resumedBytes - receivedFromPeers,
            segments: scheduler.order.map { index in
                let segment = scheduler.segments[index]
                var active = false
                if case .active = segment.state { active = true }
                return DownloadProgress.Segment(
                    start: segment.start, end: segment.end, doneBytes: segment.received, isActive: active)
            }
        )
    }

    // MARK: Events

    /// The transfer begins: the resumed prefix is confirmed, a first checkpoint saved, connections started.
    mutating func start(now: Double) -> [Action] {
        guard case .idle = state else { preconditionFailure("Invalid state: started while \(state)") }
        state = .running(
            Running(
                nextCheckpoint: now + configuration.checkpointInterval,
                nextDurable: now + configuration.durableInterval,
                nextProgress: now
            ))
        self.now = now
        startedAt = now
        resumedBytes = scheduler.flushedBytes
        receivedTotal = resumedBytes
        lastCheckpointed = resumedBytes
        speed.reset(bytes: receivedTotal, at: now)
        if let adaptive = configuration.adaptiveConnections {
            var adaptive = adaptive
            adaptive.ceiling = min(adaptive.ceiling, slots.count)
            let policy = ConnectionPolicy(configuration: adaptive, now: now)
            scheduler.setConnectionLimit(policy.target)
            self.policy = policy
        } else if configuration.sizesPieces {
            sizer = PieceSizer()
        }
        if let seconds = configuration.probeFirstByte {
            policy?.firstByte(after: seconds)
            sizer?.firstByte(after: seconds)
        }
        adoptsProbe = configuration.probeRange != nil
        var actions = confirmPrefix()
        for index in scheduler.segmentsToVerify {
            // Written by an earlier run but not yet checked.
            actions.append(.verify(segment: index, checks: pieceChecks(of: index)))
        }
        if configuration.keepsCheckpoints {
            actions.append(.createReserve)
            // A manifest exists from the start, so even a failure before the first interval leaves one behind
            // (a plan already complete goes straight to its final checkpoint).
            if !scheduler.isComplete { actions.append(checkpoint(durable: false)) }
        }
        return actions + proceed()
    }

    /// Time passes: checkpoints, syncs and progress fall due, retries become due, connections may start.
    ///
    /// For an adaptive count, the executor passes what it last read: the rate limit (bytes a second) that binds the
    /// transfer, if any, and the seconds its thread has been idle in all (not running on a CPU). The count adds no
    /// connection the limit could not use, nor any while the thread is hardly idle (braid reads as fast as it can).
    mutating func tick(now: Double, rateLimit: Double? = nil, readerIdle: Double? = nil) -> [Action] {
        guard case var .running(running) = state else { return [] }
        self.now = now
        running.reservationRefused = false
        var actions: [Action] = []
        if configuration.keepsCheckpoints {
            if now >= running.nextCheckpoint {
                running.nextCheckpoint = now + configuration.checkpointInterval
                // Buffered bytes go to the file first, so a kill loses at most one interval of work.
                actions.append(.flushBuffers)
            }
            if now >= running.nextDurable {
                running.nextDurable = now + configuration.durableInterval
                if syncMarks == nil {
                    let marks = scheduler.segments.map(\.flushed)
                    syncMarks = marks
                    actions.append(.sync(marks: marks))
                }
            }
        }
        if now >= running.nextProgress {
            running.nextProgress = now + configuration.progressInterval
            actions.append(.progress(progress(now: now)))
        }
        state = .running(running)
        sizer?.sample(now: now, receivedTotal: receivedTotal, active: scheduler.activeCount)
        let receiving = policy == nil ? 0 : receivingCount
        if policy?.sample(
            now: now, receivedTotal: receivedTotal, active: scheduler.activeCount, receiving: receiving,
            rateLimit: rateLimit, readerIdle: readerIdle, left: scheduler.bytesLeft) == true,
            let target = policy?.target
        {
            scheduler.setConnectionLimit(target)
            actions += endSurplus(above: target)
        }
        return actions + hashAhead() + proceed()
    }

    /// The connections that receive: their response has begun, or they had one accepted and now wait for the next
    /// piece's. An adaptive count is measured (and a wave of new connections followed) once its connections receive.
    var receivingCount: Int {
        slots.indices.reduce(0) { count, slot in
            guard case .busy = slots[slot], answered[slot] else { return count }
            return count + 1
        }
    }

    /// A stop was asked for (a signal, `pause()`, `cancel()`): the transfer ends with progress saved.
    mutating func stopRequested(_ reason: StopReason) -> [Action] {
        end(with: .stopped(reason))
    }

    /// Every buffered byte reached the file: checkpoint if anything moved since the last one.
    mutating func buffersFlushed() -> [Action] {
        guard case .running = state, scheduler.flushedBytes != lastCheckpointed else { return [] }
        return [checkpoint(durable: false)]
    }

    mutating func checkpointSaved() -> [Action] {
        guard case let .finishing(outcome, _) = state else { return [] }
        return finish(outcome)
    }

    /// A checkpoint could not be saved. While running, the download fails; the final one is tried once more
    /// with the reserve given back, and if that fails too, the previous checkpoint stays (still true, only older).
    mutating func checkpointFailed(_ error: BraidError) -> [Action] {
        switch state {
        case .running:
            return end(with: .failed(error))
        case let .finishing(outcome, retried: false):
            state = .finishing(outcome, retried: true)
            return [.releaseReserve, checkpoint(durable: false)]
        case let .finishing(outcome, retried: true):
            if case .completed = outcome { return finish(.failed(error)) }
            return finish(outcome)
        default:
            return []
        }
    }

    /// The sync that started with `marks` completed: those bytes are durable, and a checkpoint says so.
    mutating func syncCompleted(marks: [Int64]) -> [Action] {
        let lowered = zip(marks, syncMarks ?? marks).map { min($0, $1) }
        syncMarks = nil
        scheduler.synced(flushedAtSyncStart: lowered)
        guard case .running = state, configuration.keepsCheckpoints else { return [] }
        return [checkpoint(durable: true)]
    }

    mutating func syncFailed(_ error: BraidError) -> [Action] {
        syncMarks = nil
        return end(with: .failed(error))
    }

    /// The shared budget answered a `reserveConnection`.
    mutating func connectionReserved(source: Int, granted: Bool, now: Double) -> [Action] {
        self.now = now
        if case .idle = state { preconditionFailure("Invalid state: a connection was reserved before the start") }
        guard case var .running(running) = state else {
            // The transfer began to end since it asked: a connection granted goes straight back.
            return granted ? [.releaseConnection(source: source)] : []
        }
        guard let pending = running.pendingReservation, pending.source == source else {
            preconditionFailure("Invalid state: a connection to source \(source) was reserved unasked")
        }
        running.pendingReservation = nil
        if !granted { running.reservationRefused = true }
        state = .running(running)
        guard granted else { return [] }
        guard let started = begin(slot: pending.slot, source: source) else {
            return [.releaseConnection(source: source)]
        }
        return started + proceed()
    }

    // MARK: Helpers

    /// Starts connections while there is work and a free slot, or completes the transfer.
    mutating func proceed() -> [Action] {
        guard case var .running(running) = state else { return [] }
        if scheduler.isComplete { return end(with: .completed(length: scheduler.totalLength)) }
        var actions: [Action] = []
        while running.pendingReservation == nil, let slot = slots.firstIndex(of: .idle), scheduler.hasWork(now: now),
            let source = chooseSource()
        {
            if configuration.sharesConnections {
                guard !running.reservationRefused else { break }
                running.pendingReservation = Reservation(slot: slot, source: source)
                actions.append(.reserveConnection(source: source))
                break
            }
            guard let started = begin(slot: slot, source: source) else { break }
            actions += started
        }
        state = .running(running)
        // A slot left idle (beyond the count, or out of work) starts a new connection when it is used again.
        for slot in slots.indices where slots[slot] == .idle { answered[slot] = false }
        return actions
    }

    /// The count dropped to `target`: the connections beyond it, those with the most left to fetch, stop within
    /// 64 KiB (`SegmentScheduler.takeBack`) and their rest waits for the others, so that a server is not kept busy
    /// with connections the count no longer wants while each finishes its piece.
    private mutating func endSurplus(above target: Int) -> [Action] {
        let active = scheduler.order.compactMap { index -> (slot: Int, segment: Int)? in
            guard case let .active(slot) = scheduler.segments[index].state else { return nil }
            return (slot, index)
        }
        guard active.count > target else { return [] }
        let surplus = active.sorted {
            scheduler.segments[$0.segment].remaining > scheduler.segments[$1.segment].remaining
        }
        .prefix(active.count - target)
        return surplus.compactMap { slot, segment in
            scheduler.takeBack(segment: segment, keeping: 64 << 10).map { .shrink(slot: slot, end: $0) }
        }
    }

    /// The requests on `shared` slots are streams of a connection that carries others too, and the pool now gives
    /// each request it starts a connection of its own (`StreamsPerConnection`, behind a cap on each connection):
    /// each stops at its next 64 KiB boundary (as a steal would cut it), and what it had still to fetch beyond, when
    /// that is at least 256 KiB, waits for a request of its own, which the cap then no longer holds with the others.
    mutating func connectionsSeparated(slots shared: [Int]) -> [Action] {
        guard case .running = state, configuration.usesRanges else { return [] }
        var actions: [Action] = []
        for slot in shared {
            guard case let .busy(attempt) = slots[slot], sources[attempt.source].peer == nil,
                case .active(slot) = scheduler.segments[attempt.segment].state,
                let end = scheduler.takeBack(segment: attempt.segment, keeping: 1, minimum: 256 << 10)
            else { continue }
            actions.append(.shrink(slot: slot, end: end))
        }
        return actions + proceed()
    }

    /// The live source with the fewest connections, among those not being renewed: segments spread evenly over the
    /// URL and its mirrors. A cache peer is never chosen here: its slices are its own (`cachePeerSource(for:)`).
    private func chooseSource() -> Int? {
        sources.indices.filter { isOrigin($0) && sources[$0].alive && !sources[$0].refreshing }.min {
            sources[$0].activeConnections < sources[$1].activeConnections
        }
    }

    /// Gives `slot` the next piece of work from `source`: a waiting segment, or half of the largest active one.
    private mutating func begin(slot: Int, source chosen: Int) -> [Action]? {
        var source = chosen
        let segmentCount = scheduler.segments.count
        var pieceBytes =
            policy?.pieceSize(totalLength: scheduler.totalLength)
            ?? sizer?.pieceSize(connections: scheduler.connectionLimit, left: scheduler.bytesLeft)
        var sharingAmong = policy?.sharingCount
        let adoptsProbe = self.adoptsProbe
        self.adoptsProbe = false
        if adoptsProbe, let carried = configuration.probeRange, carried.lowerBound == 0,
            carried.upperBound < scheduler.totalLength
        {
            // The probe's response ends before the file does (a list's probe asks for its first bytes only, or a
            // server sent less of an open range): the first request is exactly those bytes, adopted whole and not
            // cut, so that its connection stays open for the next. One connection's share of all that is left,
            // capped at them, cuts the plan there.
            pieceBytes = carried.upperBound
            sharingAmong = 1
        }
        // A steal repays its first byte only for more than a tenth of a full piece (two waits' worth), however
        // small the share of what is left has made requests.
        let stealsAtLeast = (policy?.pieceBytes ?? sizer?.pieceBytes).map { $0 / 10 }
        guard
            let index = scheduler.assign(
                connection: slot, now: now, pieceBytes: pieceBytes, stealsAtLeast: stealsAtLeast,
                sharingAmong: sharingAmong)
        else {
            return nil
        }
        var actions: [Action] = []
        if scheduler.segments.count > segmentCount, let position = scheduler.order.firstIndex(of: index),
            position > 0, case let .active(victimSlot) = scheduler.segments[scheduler.order[position - 1]].state
        {
            // A steal: the segment before the new one in file order was cut short.
            actions.append(.shrink(slot: victimSlot, end: scheduler.segments[index].start))
        }
        if let peer = cachePeerSource(for: index) {
            // A slice of the file: the peer rendezvous hashing picks for it serves it, whatever was chosen.
            source = peer
        } else if avoidedSource[index] == source, !configuration.sharesConnections,
            let other = sources.indices.filter({
                $0 != source && isOrigin($0) && sources[$0].alive && !sources[$0].refreshing
            }).min(by: { sources[$0].activeConnections < sources[$1].activeConnections })
        {
            // Its bytes from this source failed their digest: another mirror serves it.
            source = other
        }
        lastSource[index] = source
        if sources[source].servesContentDigests { scheduler.pin(segment: index) }
        let segment = scheduler.segments[index]
        let request: TransferRequest
        if sources[source].peer != nil {
            request = peerRequest(forSegment: index)
            // Not cut short by a steal: a thief would ask the peer for the whole slice again.
            scheduler.pin(segment: index)
        } else if configuration.usesRanges {
            var ranged = TransferRequest(range: (segment.start + segment.flushed)..<segment.end, skip: 0, ranged: true)
            if adoptsProbe, source == 0, let carried = configuration.probeRange,
                ranged.range.lowerBound == carried.lowerBound, ranged.range.upperBound < carried.upperBound
            {
                // The probe's response carries more than this request keeps: it is asked for whole, so that it is
                // the one adopted, and cut once this request's bytes are in (`overran`). One that ends before the
                // file was made this request's exact range above, and is kept whole.
                ranged.asked = carried
            }
            request = ranged
        } else {
            // Without ranges the body always starts at byte 0: skip what is already on disk.
            request = TransferRequest(range: segment.flushed..<segment.end, skip: segment.flushed, ranged: false)
        }
        sources[source].activeConnections += 1
        slots[slot] = .busy(
            Attempt(
                segment: index, source: source, request: request, generation: sources[source].generation,
                startedAt: now, heldSource: chosen))
        actions.append(.start(slot: slot, source: source, request: request))
        return actions
    }

    /// Ends the transfer with `outcome` (the first outcome wins): every active transfer is aborted, and once all
    /// have ended, the final checkpoint is saved.
    mutating func end(with outcome: Outcome) -> [Action] {
        guard case .running = state else { return [] }
        state = .ending(outcome)
        var actions: [Action] = []
        for (slot, state) in slots.enumerated() where state != .idle { actions.append(.abort(slot: slot)) }
        return actions + finishIfIdle()
    }

    mutating func finishIfIdle() -> [Action] {
        guard case let .ending(outcome) = state, !slots.contains(where: { $0 != .idle }) else { return [] }
        guard configuration.keepsCheckpoints else { return finish(outcome) }
        state = .finishing(outcome, retried: false)
        return [checkpoint(durable: false)]
    }

    private mutating func finish(_ outcome: Outcome) -> [Action] {
        state = .finished(outcome)
        return [.progress(progress(now: now)), .finish(outcome)]
    }

    mutating func checkpoint(durable: Bool) -> Action {
        lastCheckpointed = scheduler.flushedBytes
        return .checkpoint(segments: scheduler.manifestSegments, durable: durable)
    }

    /// Tells the whole-file digest how far it may read ahead, a MiB at a time or to the end of a segment: bytes of
    /// the first unconfirmed segment that its connection has written, unless a `Content-Digest` is still to vouch
    /// for them (a mismatch rewrites them).
    mutating func hashAhead() -> [Action] {
        guard configuration.hashesAhead, let (segment, end) = scheduler.writtenPrefix,
            end >= hashedAheadUpTo + (1 << 20) || (end > hashedAheadUpTo && end == scheduler.segments[segment].end)
        else { return [] }
        let checked = slots.contains { slot in
            if case let .busy(attempt) = slot { return attempt.segment == segment && attempt.contentDigest != nil }
            return false
        }
        guard !checked else { return [] }
        hashedAheadUpTo = end
        return [.hashAhead(upTo: end)]
    }

    /// Tells the verifier about newly confirmed bytes.
    mutating func confirmPrefix() -> [Action] {
        let prefix = scheduler.confirmedPrefix
        guard prefix > confirmedUpTo else { return [] }
        confirmedUpTo = prefix
        return [.confirm(upTo: prefix)]
    }
}

/// The range a request fills and how its body maps onto the file.
struct TransferRequest: Equatable, Sendable {
    /// The file bytes the response fills, in order, from `range.lowerBound`; for a ranged request, exactly the
    /// bytes asked for unless `asked` says otherwise.
    var range: Range<Int64>
    /// Body bytes to drop before `range.lowerBound` (a single stream restarted from byte 0 skips what is on disk,
    /// a cache peer's whole slice what is before the segment).
    var skip: Int64
    /// Whether the request asks for `range` with a `Range` header (else it asks for the whole body).
    var ranged: Bool
    /// The bytes a ranged request asks for when they are more than `range`: a cache peer is asked for its whole
    /// slice, the one request its cache stores, and the bytes outside `range` are dropped; the probe's response,
    /// adopted as the first request, carries the file from its start, and is ended once `range` is received.
    var asked: Range<Int64>? = nil

    /// The bytes the `Range` header asks for, which a `206` must answer exactly.
    var requested: Range<Int64> { asked ?? range }

    /// The `Range` header's value without `bytes=`, or nil for the whole body.
    var rangeHeader: String? { ranged ? "\(requested.lowerBound)-\(requested.upperBound - 1)" : nil }
}
