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

/// Performs one transfer on the calling thread: libcurl's multi loop, positional writes, the manifest store, the
/// syncer's thread and the verifier's feed.
///
/// It decides nothing. libcurl's callbacks and the passing of time become events of the `TransferMachine`, and
/// the engine performs the actions the machine returns.
final class TransferEngine {
    struct Configuration {
        var machine: TransferMachine.Configuration
        var requestOptions: RequestOptions
        /// Small received chunks are gathered into blocks of this size before each positional write.
        var writeBlockSize = 128 << 10
        var logger = Logger(label: "braid", factory: { _ in SwiftLogNoOpLogHandler() })
        /// Follows a source's URL as given again (on this thread), for a fresh URL to the same file.
        var refresher: (Source) -> Result<Source, BraidError> = { _ in
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
    private let interrupter: Interrupter
    private let budget: ConnectionBudget?
    private let limiter: RateLimiter?
    private let hasher: PrefixHasher?
    private let checkpoints: Checkpoints?
    private let syncer: DurabilitySyncer?
    private let reports: Reports
    private let multi: MultiHandle
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
    /// For an adaptive count: when this thread's busy seconds were first read and what they were, when last, and
    /// the idle seconds that reading gave.
    private var busyAtStart: (time: Double, busy: Double)?
    private var busyReadAt = -Double.infinity
    private var lastReaderIdle: Double?

    /// - Parameters:
    ///   - syncer: syncs `sink` to disk for checkpoints marked durable; started and stopped by its owner.
    ///   - pieceReader: a descriptor open for reading on the file, which the engine owns, for checking pieces
    ///     against digests; nil only when nothing is written, and so nothing is checked.
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
        reports: Reports
    ) {
        self.machine = machine
        self.sink = sink
        self.configuration = configuration
        self.interrupter = interrupter
        self.budget = budget
        self.limiter = limiter
        self.hasher = hasher
        self.checkpoints = checkpoints
        self.syncer = syncer
        self.reports = reports
        let multi = MultiHandle(maximumConnections: machine.slots.count)
        self.multi = multi
        // A finished check wakes the poll at once: the multi handle outlives the verifier, stopped in `run()`.
        let address = UInt(bitPattern: multi.raw)
        verifier = pieceReader.map { reader in
            PieceVerifier(reading: reader) {
                if let multi = UnsafeMutableRawPointer(bitPattern: address) { _ = curl_multi_wakeup(multi) }
            }
        }
    }

    /// Runs until the machine finishes the transfer.
    func run() -> TransferMachine.Outcome {
        // With a digest to verify, hashing is the critical path whenever the network outruns one core's worth of
        // MD5: let the verifier thread have the CPU first. Only this thread is affected, and only while it runs.
        let previousNice = hasher == nil ? nil : braid_set_thread_nice(5)
        interrupter.register(multi)
        tickets = budget.map { budget in machine.sources.map { budget.register(host: $0.host) } } ?? []
        connections = machine.slots.indices.map {
            Connection(slot: $0, engine: self, bufferSize: configuration.writeBlockSize)
        }
        configuredURLs = Array(repeating: nil, count: connections.count)
        defer {
            interrupter.unregister()
            verifier?.stop()
            for connection in connections where connection.isBusy { multi.remove(connection.easy) }
            for ticket in tickets { budget?.unregister(ticket) }
            if let previousNice { _ = braid_set_thread_nice(previousNice) }
        }
        var stopRequested = false
        perform(machine.start(now: Self.now()))
        while outcome == nil {
            if !stopRequested, let reason = interrupter.reason {
                stopRequested = true
                perform(machine.stopRequested(reason))
                continue
            }
            // Only an adaptive count reads them: no walk of the limiter chain per loop for a fixed one.
            let now = Self.now()
            let adapts = machine.policy != nil
            perform(
                machine.tick(
                    now: now,
                    rateLimit: adapts ? limiter?.effectiveRate.map(Double.init) : nil,
                    readerIdle: adapts ? readerIdle(now: now) : nil
                ))
            guard outcome == nil else { break }
            takeStreamProgress()
            guard outcome == nil else { break }
            multi.poll(timeoutMilliseconds: Int(pollTimeout() * 1000))
            // Aborts wait until the callbacks have run and every finished transfer was read: a transfer taken
            // off the handle early could still have its end waiting to be read, and be reported twice.
            performing += 1
            _ = multi.perform()
            while let finished = multi.nextFinished() { end(handle: finished.handle, code: finished.result) }
            performing -= 1
            takeAborts()
            takeSync()
            takeVerified()
            resumeThrottled()
        }
        return outcome!
    }

    /// The seconds this thread has been idle since the transfer began: not running on a CPU. Not
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
    func responseHead(slot: Int, headers: ResponseHeaders, setupSeconds: Double) {
        perform(
            machine.responseHead(
                slot: slot, headers: headers, now: Self.now(), wallClock: Self.wallClock(), setupSeconds: setupSeconds))
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
            let result = configuration.refresher(machine.sources[source])
            perform(machine.sourceRefreshed(source: source, result: result, now: Self.now()))
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
        }
    }

    private func start(_ connection: Connection, source: Int, request: TransferRequest) {
        let target = machine.sources[source]
        let (url, options) = configuration.cachePeers.target(
            of: target, origin: machine.sources[0], options: configuration.requestOptions)
        if connection.source != source || configuredURLs[connection.slot] != url {
            // A different server, or a renewed URL: point the handle there (its keep-alive connection to the old
            // one is pooled).
            connection.easy.configure(url: url, options: options, headers: target.headers)
            configuredURLs[connection.slot] = url
        }
        connection.begin(request, source: source)
        connection.easy.set(CURLOPT_RANGE, request.rangeHeader)
        connection.easy.set(CURLOPT_LOW_SPEED_LIMIT, lowSpeedLimit)
        connection.easy.clearError()
        configuration.logger.trace(
            "request",
            metadata: [
                "braid.source": "\(PrintableText.sanitised(url))",
                "braid.range": "\(request.range.lowerBound)-\(request.range.upperBound - 1)",
                "braid.connection": "\(connection.slot)",
            ]
        )
        multi.add(connection.easy)
    }

    private func end(handle: UnsafeMutableRawPointer, code: CURLcode) {
        guard let connection = connections.first(where: { $0.easy.raw == handle }), connection.isBusy else { return }
        // libcurl's code becomes Braid's own kind of failure here, at the boundary: the machine never sees libcurl.
        let result: TransferResult =
            code == CURLE_OK ? .finished : .failed(TransportFailure(code, detail: connection.easy.describe(code)))
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
        multi.remove(connection.easy)
        // A response without a body (an error status, an empty range) is checked at its end.
        // Writing what is buffered can fail and abort this very transfer: that abort must not end it a second time.
        performing += 1
        if result == .finished { connection.deliverHeadIfNeeded() }
        connection.finish()
        performing -= 1
        // An abort still pending for this slot was meant for this transfer, not for the slot's next one.
        pendingAborts.removeAll { $0 == connection.slot }
        configuration.logger.trace(
            "response",
            metadata: [
                "braid.connection": "\(connection.slot)", "braid.status": "\(connection.headers.status)",
                "braid.result": "\(result)",
            ]
        )
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

    private func save(_ segments: [Manifest.Segment], durable: Bool) {
        guard let checkpoints else { return perform(machine.checkpointSaved()) }
        var manifest = checkpoints.template
        manifest.bootID = BootID.current
        manifest.segments = segments
        checkpoints.annotate?(&manifest)
        do {
            try checkpoints.store.save(manifest, durable: durable)
        } catch {
            return perform(machine.checkpointFailed(error))
        }
        checkpoints.saved?()
        perform(machine.checkpointSaved())
    }
}

@available(*, unavailable)
extension TransferEngine: Sendable {}
