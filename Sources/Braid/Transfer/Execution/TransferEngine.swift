import CCurl
import CLinuxIO
import Dispatch
import Logging
import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Performs one transfer as a client of a `TransferPool`: its requests on the pool's multi handle, positional
/// writes, the manifest store, the syncer's thread and the verifier's feed.
///
/// It decides nothing. libcurl's callbacks and the passing of time become events of the `TransferMachine`, and
/// the engine performs the actions the machine returns. While attached it is confined to the pool's thread, which
/// it shares with other downloads: whatever may block for long (following a URL again, a durable checkpoint's
/// sync) is an errand for the download's own thread, which waits in `run()` meanwhile.
final class TransferEngine {
    struct Configuration {
        var machine: TransferMachine.Configuration
        var requestOptions: RequestOptions
        /// Small received chunks are gathered into blocks of this size before each positional write.
        var writeBlockSize = 128 << 10
        var logger = Logger(label: "braid", factory: { _ in SwiftLogNoOpLogHandler() })
        /// Follows a source's URL as given again, for a fresh URL to the same file: on the download's thread, and
        /// given way to once its second argument says the transfer no longer wants the answer.
        var refresher: (Source, @escaping @Sendable () -> Bool) -> Result<Source, BraidError> = { _, _ in
            .failure(BraidError(.protocolViolation, "the URL cannot be followed again"))
        }
        /// The cache peers the machine's peer sources stand for, and how requests to them are made.
        var cachePeers = CachePeerRequests()
        /// The reader of a streamed download: it follows the confirmed prefix as the digest does, and its
        /// progress moves the window (see `StreamFeed`).
        var stream: StreamFeed?
    }

    /// Where checkpoints go: the store, and the manifest they fill in with the machine's segments.
    struct Checkpoints {
        var store: ManifestStore
        var template: Manifest
        /// Fills in what else changes between checkpoints, such as the ranges a repair pass has rewritten.
        var annotate: (@Sendable (inout Manifest) -> Void)? = nil
        /// Called once a checkpoint is saved: what it records may now be acted on (a stream frees released bytes).
        var saved: (@Sendable () -> Void)? = nil
    }

    /// What the engine reports as it goes.
    struct Reports {
        var progress: (DownloadProgress) -> Void
        var retry: (String, Double) -> Void
        var notice: (String) -> Void
    }

    private(set) var machine: TransferMachine
    private let sink: any TransferSink
    private let configuration: Configuration
    /// Where each range request is logged, at `-vv` only.
    private let requestLog: RequestLog?
    private let interrupter: Interrupter
    private let budget: ConnectionBudget?
    /// Whether its connections leave room in `budget` for a shared connection on another pool (`init`).
    private let besideSharedConnection: Bool
    private let limiter: RateLimiter?
    private let hasher: PrefixHasher?
    private let checkpoints: Checkpoints?
    private let syncer: DurabilitySyncer?
    private let reports: Reports
    private let pool: TransferPool.Driver
    /// The download's thread, waiting in `run()`, and what it does for the pool's thread.
    private let errands: Errands
    /// Whether its requests may share connections over HTTP/2 (`EasyHandle.setHTTPVersion`): not when the file's
    /// segments run side by side, each over a connection of its own, on a pool of its own.
    private let multiplexes: Bool
    /// The probe's first response, its body paused, until the first request it covers adopts it (or another
    /// request starts first, and it is given up).
    private var adoption: ParkedResponse?
    /// Checks written pieces against their digests, on its own threads.
    private let verifier: PieceVerifier?
    private var connections: [Connection] = []
    /// The URL each connection's handle was last pointed at.
    private var configuredURLs: [String?] = []
    /// Each source's place in the shared budget, when there is one.
    private var tickets: [Int] = []
    /// Slots the machine aborted; taken off the multi handle once no callback is running.
    private var pendingAborts: [Int] = []
    private var performing = 0
    /// Where the next round of resuming throttled connections begins, so that none is always served last.
    private var resumeCursor = 0
    private var outcome: TransferMachine.Outcome?
    private var stopRequested = false
    /// The interrupter's count of pauses when the transfer began (`Interrupter.stopReason(pausesBefore:)`).
    private var pausesBefore: UInt64 = 0
    /// Errands handed to the download's thread whose answers are still to come.
    private var errandsOut = 0
    /// A durable checkpoint is being saved on the download's thread: other saves wait for it (`deferredSave`).
    private var durableSaveInFlight = false
    private var deferredSave: (segments: [Manifest.Segment], durable: Bool)?
    /// For an adaptive count: when this thread's busy seconds were first read and what they were, when last, and
    /// the idle seconds that reading gave.
    private var busyAtStart: (time: Double, busy: Double)?
    private var busyReadAt = -Double.infinity
    private var lastReaderIdle: Double?

    /// - Parameters:
    ///   - syncer: syncs `sink` to disk for checkpoints marked durable; started and stopped by its owner.
    ///   - pieceReader: a descriptor open for reading on the file, which the engine owns, for checking pieces
    ///     against digests; nil only when nothing is written, and so nothing is checked.
    ///   - besideSharedConnection: whether `pool` is a lane's pool for spread segments (`PoolLanes`), beside the
    ///     lane's pool whose requests share connections: every request asks for HTTP/1.1, even a last segment
    ///     alone, since other downloads' segments on `pool` do (libcurl 7.88, below), and its connections leave room
    ///     in `budget` for the shared one (`ConnectionBudget.register(host:besideSharedConnection:)`).
    ///   - sharesPool: whether other downloads' requests run on `pool` (a list, the daemon). Every request then
    ///     asks for HTTP/2 over HTTPS, segments too: libcurl 7.88 takes an in-use HTTP/1.1 connection for one that
    ///     can multiplex once any connection to its host speaks HTTP/2 (its `ConnectionExists` judges by host, not
    ///     by connection), and a request that asks for HTTP/2 is then sent on it behind another's, its response
    ///     read from the middle of that one's ("Received HTTP/0.9 when not allowed"). Requests of both versions to
    ///     one host must not share a multi handle.
    init(
        machine: TransferMachine,
        sink: any TransferSink,
        configuration: Configuration,
        interrupter: Interrupter,
        budget: ConnectionBudget?,
        limiter: RateLimiter? = nil,
        hasher: PrefixHasher?,
        checkpoints: Checkpoints?,
        syncer: DurabilitySyncer?,
        pieceReader: FileDescriptor? = nil,
        reports: Reports,
        pool: TransferPool.Driver,
        sharesPool: Bool = false,
        besideSharedConnection: Bool = false,
        adopting adoption: ParkedResponse? = nil
    ) {
        self.machine = machine
        self.sink = sink
        self.configuration = configuration
        requestLog = RequestLog(configuration.logger)
        self.interrupter = interrupter
        self.budget = budget
        self.limiter = limiter
        self.hasher = hasher
        self.checkpoints = checkpoints
        self.syncer = syncer
        self.reports = reports
        self.pool = pool
        self.adoption = adoption
        self.besideSharedConnection = besideSharedConnection
        errands = Errands(waking: pool.multiAddress)
        multiplexes =
            !besideSharedConnection
            && (sharesPool || !machine.configuration.usesRanges || machine.slots.count == 1
                || machine.scheduler.segments.count == 1)
        // A finished check wakes the pool at once: the pool outlives the verifier, stopped in `run()`.
        let address = pool.multiAddress
        verifier = pieceReader.map { reader in
            PieceVerifier(reading: reader) { MultiHandle.wake(address: address) }
        }
    }

    /// Runs the transfer on the pool until the machine finishes it, doing the errands the pool's thread hands over
    /// meanwhile on this one.
    func run() -> TransferMachine.Outcome {
        pool.attach(self)
        let outcome = errands.serve { [configuration] errand in
            switch errand {
            case let .refresh(source, current, abandoned):
                return .refreshed(source: source, configuration.refresher(current, abandoned))
            case let .saveDurably(manifest, store):
                do throws(BraidError) {
                    try store.save(manifest, durable: true)
                    return .saved(nil)
                } catch {
                    return .saved(error)
                }
            }
        }
        verifier?.stop()
        return outcome
    }

    /// The seconds the pool's thread has been idle since the transfer began: not running on a CPU. Not
    /// the time in `poll`, which misses a thread asleep elsewhere (a write waiting for the disk) and so would take a
    /// reader that waits as one that cannot keep up. Read from the kernel at most every 5 ms: a stale reading is
    /// off by at most the idle share of those 5 ms, little where it matters (a thread that is hardly idle) and
    /// against windows of 50 ms and more. Nil where the thread's time cannot be read.
    private func readerIdle(now: Double) -> Double? {
        guard now - busyReadAt >= 0.005 else { return lastReaderIdle }
        busyReadAt = now
        let busy = braid_thread_busy_seconds()
        guard busy >= 0 else {
            lastReaderIdle = nil
            return nil
        }
        let start = busyAtStart ?? (now, busy)
        busyAtStart = start
        lastReaderIdle = max(0, (now - start.time) - (busy - start.busy))
        return lastReaderIdle
    }

    /// How long to wait for the network: as the machine asks, or less when throttled connections can go on sooner.
    private func pollTimeout() -> Double {
        let now = Self.now()
        let timeout = machine.pollTimeout(now: now)
        guard let limiter, let rate = limiter.effectiveRate, connections.contains(where: \.isThrottled) else {
            return timeout
        }
        // Wait for a hundredth of a second's worth of tokens: enough for a chunk or two, few wake-ups a second.
        let wait = limiter.secondsUntil(holding: max(8192, Double(rate) / 100), now: now)
        return min(timeout, max(0.001, wait))
    }

    /// Seconds on a monotonic clock.
    static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }

    /// Seconds since 1970 UTC by the wall clock, for dates a server sends.
    static func wallClock() -> Double {
        Date().timeIntervalSince1970
    }

    // MARK: Events from connections, on this thread

    /// The response head on `slot` is complete; a head the machine refuses aborts the slot.
    func responseHead(slot: Int, headers: ResponseHeaders, setupSeconds: Double, waited: Double?) {
        perform(
            machine.responseHead(
                slot: slot, headers: headers, now: Self.now(), wallClock: Self.wallClock(), setupSeconds: setupSeconds,
                waited: waited))
    }

    /// Whether a connection may take a chunk of `count` bytes now; if it may, the bytes count against the rate limit.
    func admit(count: Int) -> Bool {
        limiter?.admit(count, now: Self.now()) ?? true
    }

    func received(slot: Int, count: Int) {
        machine.bytesReceived(slot: slot, count: count)
    }

    /// Writes bytes of `slot`'s response at `offset`; false stops the transfer.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64, slot: Int) -> Bool {
        // By design no write lands below the confirmed prefix (only confirmed bytes reach the verifier, and they
        // are never rewritten); refuse one rather than let the digest and the file disagree.
        guard offset >= machine.confirmedUpTo else {
            let error = BraidError.integrity(
                "internal error: bytes at \(offset) were already verified and must not change")
            perform(machine.writeFailed(slot: slot, error: error))
            return false
        }
        do {
            try sink.write(bytes, at: offset)
        } catch {
            perform(machine.writeFailed(slot: slot, error: error))
            return false
        }
        machine.bytesWritten(slot: slot, count: bytes.count)
        return true
    }

    func overran(slot: Int) {
        perform(machine.overran(slot: slot))
    }

    // MARK: Performing actions

    private func perform(_ actions: [TransferMachine.Action]) {
        performing += 1
        for action in actions { perform(action) }
        performing -= 1
        if performing == 0 { takeAborts() }
    }

    private func perform(_ action: TransferMachine.Action) {
        switch action {
        case let .reserveConnection(source):
            let granted = budget?.acquire(tickets[source]) ?? true
            perform(machine.connectionReserved(source: source, granted: granted, now: Self.now()))
        case let .releaseConnection(source):
            budget?.release(tickets[source])
        case let .refreshSource(source):
            errandsOut += 1
            errands.send(.refresh(source: source, machine.sources[source], abandoned: errands.isAbandoned))
        case let .start(slot, source, request):
            start(connections[slot], source: source, request: request)
        case let .shrink(slot, end):
            connections[slot].shrink(to: end)
        case let .abort(slot):
            connections[slot].refuse()
            pendingAborts.append(slot)
        case .createReserve:
            do { try checkpoints?.store.createReserve() } catch { perform(machine.checkpointFailed(error)) }
        case .releaseReserve:
            checkpoints?.store.releaseReserve()
        case .flushBuffers:
            for connection in connections where connection.isBusy { connection.flushBuffer() }
            perform(machine.buffersFlushed())
        case let .checkpoint(segments, durable):
            save(segments, durable: durable)
        case let .sync(marks):
            syncer?.request(flushedMarks: marks)
        case let .writeBack(range):
            syncer?.startWriteBack(range)
        case let .confirm(upTo):
            hasher?.advance(to: upTo)
            configuration.stream?.advance(to: upTo)
        case let .hashAhead(upTo):
            hasher?.hashAhead(to: upTo)
            configuration.stream?.readAhead(to: upTo)
        case let .rewind(position):
            hasher?.rewind(to: position)
            configuration.stream?.rewind(to: position)
        case let .verify(segment, checks):
            // The machine checks pieces only of bytes written to a file, and its reader comes with them: unread
            // bytes never pass a check.
            guard let verifier else { preconditionFailure("Invalid state: pieces to check without a reader") }
            verifier.submit(segment: segment, checks: checks)
        case let .progress(progress):
            reports.progress(progress)
        case let .retry(reason, delay):
            reports.retry(reason, delay)
        case let .notice(message):
            reports.notice(message)
        case let .finish(outcome):
            self.outcome = outcome
            errands.abandon()
        }
    }

    private func start(_ connection: Connection, source: Int, request: TransferRequest) {
        let target = machine.sources[source]
        if let adoption {
            self.adoption = nil
            if source == 0, adoption.covers(request), let easy = adoption.adopt() {
                return startAdopted(connection, easy: easy, head: adoption.headers, source: source, request: request)
            }
            // The transfer does not begin with the bytes of the probe's response: it is given up.
            adoption.cancel()
        }
        let (url, options) = configuration.cachePeers.target(
            of: target, origin: machine.sources[0], options: configuration.requestOptions)
        if connection.source != source || configuredURLs[connection.slot] != url {
            // A different server, or a renewed URL: point the handle there (its keep-alive connection to the old
            // one is pooled).
            connection.easy.configure(url: url, options: options, headers: target.headers)
            configuredURLs[connection.slot] = url
        }
        connection.easy.setHTTPVersion(
            for: url, options: options, multiplexes: multiplexes, http2Failed: pool.http2Failed(url))
        connection.begin(request, source: source)
        connection.easy.set(CURLOPT_RANGE, request.rangeHeader)
        connection.easy.set(CURLOPT_LOW_SPEED_LIMIT, lowSpeedLimit)
        connection.easy.clearError()
        requestLog?.sent(
            "GET", url,
            [
                "braid.range": "\(request.range.lowerBound)-\(request.range.upperBound - 1)",
                "braid.connection": "\(connection.slot)",
            ])
        pool.add(connection.easy, for: self)
    }

    /// Starts `request` on `connection` with the probe's response to it, already under way: no request is sent.
    private func startAdopted(
        _ connection: Connection, easy: EasyHandle, head: ResponseHeaders, source: Int, request: TransferRequest
    ) {
        pool.transfer(easy, to: self)
        connection.adopt(easy)
        // The probe's handle carries the probe's headers: the next request configures it afresh.
        configuredURLs[connection.slot] = nil
        connection.begin(request, source: source)
        connection.easy.set(CURLOPT_LOW_SPEED_LIMIT, lowSpeedLimit)
        requestLog?.adopted([
            "braid.range": "\(request.range.lowerBound)-\(request.range.upperBound - 1)",
            "braid.connection": "\(connection.slot)",
        ])
        performing += 1
        connection.resumeAdopted(head: head)
        performing -= 1
    }

    private func end(handle: UnsafeMutableRawPointer, code: CURLcode) {
        guard let connection = connections.first(where: { $0.owns(handle) }), connection.isBusy else { return }
        if EasyHandle.failedInHTTP2(code), connection.source >= 0 {
            // The server offers HTTP/2 and resets its streams: the retry, and every later request there, use 1.1.
            pool.recordHTTP2Failure(machine.sources[connection.source].resource.resolvedURL)
        }
        // libcurl's code becomes Braid's own kind of failure here, at the boundary: the machine never sees libcurl.
        let result: TransferResult =
            code == CURLE_OK
            ? .finished
            : .failed(
                TransportFailure(
                    code, detail: connection.easy.describe(code), inHead: connection.headers.isHeadOpen))
        end(connection, result: result)
    }

    /// The speed below which a connection counts as stalled: under a rate limit, less than a quarter of each
    /// connection's share, so that a connection slowed by the limit is never taken for a stalled one.
    private var lowSpeedLimit: Int {
        let configured = configuration.requestOptions.lowSpeedBytesPerSecond
        guard let rate = limiter?.effectiveRate else { return configured }
        return min(configured, max(1, Int(rate / Int64(4 * connections.count))))
    }

    /// Reports the end of `connection`'s transfer, after writing what it still buffers.
    private func end(_ connection: Connection, result: TransferResult) {
        performing += 1
        connection.dropKeptChunk()
        performing -= 1
        pool.remove(connection.easy)
        // A response without a body (an error status, an empty range) is checked at its end.
        // Writing what is buffered can fail and abort this very transfer: that abort must not end it a second time.
        performing += 1
        if result == .finished { connection.deliverHeadIfNeeded() }
        connection.finish()
        performing -= 1
        // An abort still pending for this slot was meant for this transfer, not for the slot's next one.
        pendingAborts.removeAll { $0 == connection.slot }
        requestLog?.answered(
            status: connection.headers.status, ["braid.connection": "\(connection.slot)", "braid.result": "\(result)"])
        perform(machine.transferEnded(slot: connection.slot, result: result, now: Self.now()))
    }

    /// Takes the transfers the machine aborted off the multi handle, once no callback is running.
    private func takeAborts() {
        while performing == 0, !pendingAborts.isEmpty {
            let connection = connections[pendingAborts.removeFirst()]
            if connection.isBusy { end(connection, result: .aborted) }
        }
    }

    /// Resumes the connections paused by the rate limit once it has tokens again, in turn from where the last round
    /// stopped: each gets the chunk libcurl kept, while tokens last.
    private func resumeThrottled() {
        guard let limiter, connections.contains(where: \.isThrottled) else { return }
        let count = connections.count
        performing += 1
        for offset in 0..<count {
            let connection = connections[(resumeCursor + offset) % count]
            guard connection.isThrottled else { continue }
            guard limiter.mayReceive(now: Self.now()) else { break }
            connection.resumeReceiving()
            resumeCursor = (connection.slot + 1) % count
        }
        performing -= 1
        takeAborts()
    }

    /// Hands the machine what a stream's reader did since the last look: how far it and the digest have gone (the
    /// window moves), or why it cannot go on.
    private func takeStreamProgress() {
        switch configuration.stream?.take() {
        case let .moved(position)?: perform(machine.readerMoved(to: position))
        case let .failed(error)?: perform(machine.readerFailed(error))
        case nil: break
        }
    }

    /// Hands the machine the result of the last sync, once it is done.
    private func takeSync() {
        do {
            if let marks = try syncer?.takeCompleted() { perform(machine.syncCompleted(marks: marks)) }
        } catch {
            perform(machine.syncFailed(error))
        }
    }

    /// Hands the machine the segments whose pieces were checked.
    private func takeVerified() {
        guard let verifier else { return }
        for result in verifier.takeResults() {
            perform(machine.piecesVerified(segment: result.segment, bad: result.bad, now: Self.now()))
        }
    }

    /// Saves a checkpoint: at once on this thread, or for a durable one (which syncs), on the download's thread.
    /// Saves wait while a durable one is under way, so that two never write the manifest at once; the last one
    /// asked for is made when it is done.
    private func save(_ segments: [Manifest.Segment], durable: Bool) {
        guard let checkpoints else { return perform(machine.checkpointSaved()) }
        guard !durableSaveInFlight else {
            deferredSave = (segments, durable || deferredSave?.durable == true)
            return
        }
        var manifest = checkpoints.template
        manifest.bootID = BootID.current
        manifest.segments = segments
        checkpoints.annotate?(&manifest)
        if durable {
            durableSaveInFlight = true
            errandsOut += 1
            errands.send(.saveDurably(manifest, checkpoints.store))
            return
        }
        do {
            try checkpoints.store.save(manifest, durable: false)
        } catch {
            return perform(machine.checkpointFailed(error))
        }
        checkpoints.saved?()
        perform(machine.checkpointSaved())
    }

    /// Hands the machine what the download's thread did.
    private func takeErrands() {
        for answer in errands.takeAnswers() {
            errandsOut -= 1
            switch answer {
            case let .refreshed(source, result):
                perform(machine.sourceRefreshed(source: source, result: result, now: Self.now()))
            case let .saved(error):
                durableSaveInFlight = false
                // Only a running transfer cares how a durable checkpoint went: the final one is the later save.
                if let error, machine.isRunning { perform(machine.checkpointFailed(error)) }
                if let deferred = deferredSave {
                    deferredSave = nil
                    save(deferred.segments, durable: deferred.durable)
                }
            }
        }
    }
}

// MARK: On the pool

extension TransferEngine: PoolClient {
    func attached(to pool: TransferPool.Driver) {
        interrupter.register(multiAddress: pool.multiAddress)
        pausesBefore = interrupter.pauses
        tickets =
            budget.map { budget in
                machine.sources.map { budget.register(host: $0.host, besideSharedConnection: besideSharedConnection) }
            } ?? []
        connections = machine.slots.indices.map {
            Connection(slot: $0, engine: self, bufferSize: configuration.writeBlockSize)
        }
        configuredURLs = Array(repeating: nil, count: connections.count)
        pool.keepIdleConnections(connections.count + 4)
        perform(machine.start(now: Self.now()))
    }

    func step(now: Double) -> Double {
        guard outcome == nil else { return 0 }
        if !stopRequested, let reason = interrupter.stopReason(pausesBefore: pausesBefore) {
            stopRequested = true
            perform(machine.stopRequested(reason))
            guard outcome == nil else { return 0 }
        }
        // Only an adaptive count reads them: no walk of the limiter chain per loop for a fixed one.
        let adapts = machine.policy != nil
        perform(
            machine.tick(
                now: now,
                rateLimit: adapts ? limiter?.effectiveRate.map(Double.init) : nil,
                readerIdle: adapts ? readerIdle(now: now) : nil
            ))
        guard outcome == nil else { return 0 }
        takeStreamProgress()
        guard outcome == nil else { return 0 }
        return pollTimeout()
    }

    func willPerform() {
        // Aborts wait until the callbacks have run and every finished transfer was read: a transfer taken off the
        // handle early could still have its end waiting to be read, and be reported twice.
        performing += 1
    }

    func finished(_ handle: UnsafeMutableRawPointer, result: CURLcode) {
        end(handle: handle, code: result)
    }

    func didPerform() {
        performing -= 1
        takeAborts()
        takeSync()
        takeVerified()
        takeErrands()
        resumeThrottled()
    }

    var isFinished: Bool { outcome != nil && errandsOut == 0 }

    func detached() {
        adoption?.cancel()
        interrupter.unregister()
        for connection in connections where connection.isBusy { pool.remove(connection.easy) }
        for ticket in tickets { budget?.unregister(ticket) }
        // The handles are cleaned up here, on the pool's thread, off the multi handle.
        connections = []
        errands.finish(outcome!)
    }

    var yieldsToVerifier: Bool { hasher != nil }

    func connectionsSeparated(sharing handles: [UnsafeMutableRawPointer]) {
        guard outcome == nil else { return }
        let slots = connections.filter { connection in
            connection.isBusy && handles.contains { connection.owns($0) }
        }
        .map(\.slot)
        perform(machine.connectionsSeparated(slots: slots))
    }
}

@available(*, unavailable)
extension TransferEngine: Sendable {}
