import CCurl
import CLinuxIO
import Dispatch
import Logging
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Fetches the segments of one download in parallel over libcurl's multi interface, on the calling thread.
///
/// The engine performs what the `SegmentScheduler` decides: it starts a connection on each segment it is given,
/// writes what arrives, checkpoints the manifest after the data it describes, keeps the streaming digest fed with
/// the in-order prefix, and reports progress.
final class TransferEngine {
    struct Configuration {
        /// Fetch `Range`s (a segmented, resumable download) or the whole body in one stream.
        var usesRanges: Bool
        var connections: Int
        var requestOptions: RequestOptions
        var retryPolicy: RetryPolicy
        /// Small received chunks are gathered into blocks of this size before each positional write.
        var writeBlockSize = 128 << 10
        var checkpointInterval: Double = 0.1
        var durableInterval: Double = 5
        var progressInterval: Double = 0.25
        var logger = Logger(label: "braid", factory: { _ in SwiftLogNoOpLogHandler() })
    }

    enum Outcome {
        case completed(length: Int64)
        case remoteChanged(String)
        case rangesIgnored
        case lengthDisagrees(String)
        case failed(BraidError)
        case stopped(StopReason)
    }

    let resource: RemoteResource
    let file: PartFile
    var usesRanges: Bool { configuration.usesRanges }
    private(set) var scheduler: SegmentScheduler

    private let configuration: Configuration
    private let interrupter: Interrupter
    private let budget: ConnectionBudget?
    /// The URL and its mirrors; connections spread over the ones still alive.
    private(set) var sources: [Source]
    private let hasher: PrefixHasher?
    private let checkpoints: Checkpoints?
    private let syncer: DurabilitySyncer?
    private let onProgress: (DownloadProgress) -> Void
    private let onRetry: (String, Double) -> Void
    private let onNotice: (String) -> Void
    private let multi: MultiHandle
    private var connections: [Connection] = []
    private var outcome: Outcome?
    private var retries = 0
    private var speed = SpeedMeter()
    private var receivedTotal: Int64 = 0
    private var startedAt: Double = 0
    private var firstByteAt: Double?

    /// What one run cost: bytes received from the network, retries, and when the first body byte arrived.
    struct Statistics {
        var fetchedBytes: Int64
        var retries: Int
        var timeToFirstByte: Double?
    }

    private(set) var statistics = Statistics(fetchedBytes: 0, retries: 0, timeToFirstByte: nil)
    /// How far the verifier has been told it may read.
    private var publishedPrefix: Int64 = 0

    /// Where checkpoints go: the store, and the manifest they fill in with the scheduler's progress.
    struct Checkpoints {
        var store: ManifestStore
        var template: Manifest
    }

    init(
        resource: RemoteResource,
        mirrors: [RemoteResource] = [],
        file: PartFile,
        scheduler: SegmentScheduler,
        configuration: Configuration,
        interrupter: Interrupter,
        budget: ConnectionBudget? = nil,
        hasher: PrefixHasher?,
        checkpoints: Checkpoints?,
        onProgress: @escaping (DownloadProgress) -> Void,
        onRetry: @escaping (String, Double) -> Void,
        onNotice: @escaping (String) -> Void = { _ in }
    ) {
        self.resource = resource
        self.file = file
        self.scheduler = scheduler
        self.configuration = configuration
        self.interrupter = interrupter
        self.budget = budget
        sources = ([resource] + mirrors).map {
            Source(resource: $0, options: configuration.requestOptions, usesRanges: configuration.usesRanges)
        }
        self.hasher = hasher
        self.checkpoints = checkpoints
        self.syncer = checkpoints == nil ? nil : DurabilitySyncer(file: file)
        self.onProgress = onProgress
        self.onRetry = onRetry
        self.onNotice = onNotice
        multi = MultiHandle(maximumConnections: configuration.connections)
    }

    /// Runs until every segment is complete, the download fails, or it is stopped.
    func run() -> Outcome {
        interrupter.register(multi)
        // With a digest to verify, hashing is the critical path whenever the network outruns one core's worth of
        // MD5: let the verifier thread have the CPU first. Only this thread is affected, and only while it runs.
        let previousNice = hasher == nil ? nil : braid_set_thread_nice(5)
        defer { if let previousNice { _ = braid_set_thread_nice(previousNice) } }
        if let budget {
            for index in sources.indices { sources[index].budgetTicket = budget.register(host: sources[index].host) }
        }
        defer {
            interrupter.unregister()
            for ticket in sources.compactMap(\.budgetTicket) { budget?.unregister(ticket) }
            for connection in connections where connection.segment != nil {
                multi.remove(connection.easy)
            }
            syncer?.stop()
        }
        connections = (0..<max(1, configuration.connections)).map { id in
            let connection = Connection(id: id, engine: self, bufferSize: configuration.writeBlockSize)
            configure(connection)
            return connection
        }
        receivedTotal = scheduler.flushedBytes
        let resumed = receivedTotal
        startedAt = Self.now()
        speed.reset(bytes: receivedTotal, at: startedAt)
        defer {
            statistics = Statistics(
                fetchedBytes: receivedTotal - resumed,
                retries: retries,
                timeToFirstByte: firstByteAt.map { $0 - startedAt }
            )
        }
        publishPrefix()

        do {
            try checkpoints?.store.createReserve()
            // A manifest exists from the start, so even a failure before the first interval leaves one behind.
            try saveCheckpoint(durable: false)
        } catch {
            return .failed(error)
        }
        var nextCheckpoint = Self.now() + configuration.checkpointInterval
        var nextDurable = Self.now() + configuration.durableInterval
        var nextProgress = Self.now()
        var lastCheckpointed = scheduler.flushedBytes
        while outcome == nil {
            if let reason = interrupter.reason {
                outcome = .stopped(reason)
                break
            }
            let now = Self.now()
            startConnections(now: now)
            if scheduler.isComplete { break }

            var timeout = 100.0
            if scheduler.activeCount == 0, let retryAt = scheduler.nextRetryTime {
                timeout = min(timeout, max(1, (retryAt - now) * 1000))
            }
            multi.poll(timeoutMilliseconds: Int(timeout))
            _ = multi.perform()
            while let finished = multi.nextFinished() {
                handleFinished(finished.handle, result: finished.result)
            }

            let after = Self.now()
            do {
                if let completed = try syncer?.takeCompleted() {
                    scheduler.synced(flushedAtSyncStart: completed)
                    try saveCheckpoint(durable: true)
                    lastCheckpointed = scheduler.flushedBytes
                }
                if after >= nextCheckpoint {
                    nextCheckpoint = after + configuration.checkpointInterval
                    // Buffered bytes go to the file first, so a kill loses at most one interval of work.
                    for connection in connections { connection.flushBuffer() }
                    if scheduler.flushedBytes != lastCheckpointed {
                        try saveCheckpoint(durable: false)
                        lastCheckpointed = scheduler.flushedBytes
                    }
                }
                if after >= nextDurable {
                    nextDurable = after + configuration.durableInterval
                    syncer?.request(flushedMarks: scheduler.segments.map(\.flushed))
                }
            } catch {
                outcome = .failed(error)
            }
            if after >= nextProgress {
                nextProgress = after + configuration.progressInterval
                onProgress(progress(now: after))
            }
        }

        for connection in connections where connection.segment != nil {
            multi.remove(connection.easy)
            sources[connection.source].activeConnections -= 1
            releaseBudget(of: connection.source)
            if let segment = connection.finish() {
                _ = scheduler.ended(segment: segment, failure: nil, now: Self.now(), random: 0)
            }
        }
        do {
            try saveCheckpoint(durable: false)
        } catch {
            // The disk may be full: give back the reserve and try once more. If that fails too, the previous
            // checkpoint stays in place, which is still true, only older.
            checkpoints?.store.releaseReserve()
            do {
                try saveCheckpoint(durable: false)
            } catch {
                outcome = outcome ?? .failed(error)
            }
        }
        onProgress(progress(now: Self.now()))
        if let outcome { return outcome }
        return .completed(length: scheduler.totalLength)
    }

    // MARK: Called by connections, on this thread

    func received(segment: Int, bytes: Int) {
        scheduler.received(segment: segment, bytes: Int64(bytes))
        if firstByteAt == nil { firstByteAt = Self.now() }
        receivedTotal += Int64(bytes)
    }

    func flushed(segment: Int, bytes: Int) {
        scheduler.flushed(segment: segment, bytes: Int64(bytes))
    }

    /// Whether a write at `offset` would change bytes the verifier may already have read. By design it never
    /// does (only confirmed bytes are published, and they are never rewritten); a connection refuses such a write
    /// rather than let the digest and the file disagree.
    func wouldRewriteVerifiedBytes(at offset: Int64) -> Bool {
        offset < publishedPrefix
    }

    func discardAttempt(segment: Int) {
        scheduler.discardAttempt(segment: segment)
    }

    // MARK: Private

    private func configure(_ connection: Connection) {
        let easy = connection.easy
        let context = Unmanaged.passUnretained(connection).toOpaque()
        easy.set(CURLOPT_HEADERDATA, pointer: context)
        easy.set(CURLOPT_HEADERFUNCTION, callback: Connection.headerCallback)
        easy.set(CURLOPT_WRITEDATA, pointer: context)
        easy.set(CURLOPT_WRITEFUNCTION, callback: Connection.writeCallback)
    }

    private func releaseBudget(of source: Int) {
        if let ticket = sources[source].budgetTicket { budget?.release(ticket) }
    }

    /// The live source with the fewest connections: segments spread evenly over the URL and its mirrors.
    private func chooseSource() -> Int? {
        sources.indices.filter { sources[$0].alive }.min {
            sources[$0].activeConnections < sources[$1].activeConnections
        }
    }

    private func startConnections(now: Double) {
        guard scheduler.hasWork(now: now) else { return }
        for connection in connections where connection.segment == nil {
            guard let source = chooseSource() else { return }
            if let budget, let ticket = sources[source].budgetTicket, !budget.acquire(ticket) { return }
            guard let index = scheduler.assign(connection: connection.id, now: now) else {
                releaseBudget(of: source)
                return
            }
            if connection.source != source {
                // A different server: point the handle there (its keep-alive connection to the old one is pooled).
                connection.easy.configure(
                    url: sources[source].resource.resolvedURL,
                    options: configuration.requestOptions,
                    headers: sources[source].headers
                )
            }
            sources[source].activeConnections += 1
            let segment = scheduler.segments[index]
            let start = segment.start + segment.flushed
            if usesRanges {
                connection.begin(segment: index, source: source, from: start, to: segment.end, skip: 0)
                connection.easy.set(CURLOPT_RANGE, "\(start)-\(segment.end - 1)")
            } else {
                // Without ranges the body always starts at byte 0: skip what is already on disk.
                connection.begin(segment: index, source: source, from: 0, to: segment.end, skip: segment.flushed)
                connection.easy.set(CURLOPT_RANGE, nil as String?)
            }
            connection.easy.clearError()
            configuration.logger.trace(
                "request",
                metadata: [
                    "braid.source": "\(PrintableText.sanitised(sources[source].resource.resolvedURL))",
                    "braid.range": "\(connection.requestStart)-\(connection.requestEnd - 1)",
                    "braid.connection": "\(connection.id)",
                ]
            )
            multi.add(connection.easy)
        }
    }

    private func handleFinished(_ handle: UnsafeMutableRawPointer, result: CURLcode) {
        guard let connection = connections.first(where: { $0.easy.raw == handle }) else { return }
        multi.remove(connection.easy)
        let source = connection.source
        sources[source].activeConnections -= 1
        releaseBudget(of: source)
        if result == CURLE_OK { connection.validateIfNeeded() }
        let stop = connection.stop
        let detail = connection.easy.describe(result)
        configuration.logger.trace(
            "response",
            metadata: [
                "braid.connection": "\(connection.id)", "braid.status": "\(connection.headers.status)",
                "braid.result": "\(result == CURLE_OK ? "ok" : detail)", "braid.stop": "\(String(describing: stop))",
            ]
        )
        guard let segment = connection.finish() else { return }

        var failure: FailureKind?
        switch stop {
        case .reachedEnd:
            failure = nil
        case let .failure(kind):
            failure = kind
        case let .remoteChanged(message):
            failure = dropOrEnd(source, because: message, otherwise: .remoteChanged(message))
        case .rangesIgnored:
            failure = dropOrEnd(source, because: "it ignores byte ranges", otherwise: .rangesIgnored)
        case let .lengthDisagrees(message):
            failure = dropOrEnd(source, because: message, otherwise: .lengthDisagrees(message))
        case nil:
            if result != CURLE_OK {
                failure = FailureKind.classify(result, detail: detail)
            } else if !usesRanges && resource.length == nil {
                scheduler.endUnknownLength(segment: segment)
            }
        }
        failure = account(failure, on: source)
        let action = scheduler.ended(segment: segment, failure: failure, now: Self.now(), random: .random(in: 0...1))
        publishPrefix()
        switch action {
        case .completed:
            syncer?.startWriteBack(scheduler.segments[segment].start..<scheduler.segments[segment].end)
        case let .retry(delay):
            retries += 1
            onRetry(failure?.message ?? "the response ended early", delay)
        case let .fail(code, message):
            outcome = outcome ?? .failed(BraidError(code, message, httpStatus: connection.headers.status))
        }
    }

    /// Tracks a source's health. While another source is alive, one that fails fatally or too often is dropped
    /// and the segment retried elsewhere; the last source's failures count as they are.
    private func account(_ failure: FailureKind?, on source: Int) -> FailureKind? {
        guard let failure else {
            sources[source].failures = 0
            return nil
        }
        sources[source].failures += 1
        let fatal: Bool
        if case .fatal = failure { fatal = true } else { fatal = false }
        guard fatal || sources[source].failures >= Source.maximumFailures,
            sources.indices.contains(where: { $0 != source && sources[$0].alive }), sources[source].alive
        else { return failure }
        drop(source, because: failure.message)
        return .transient(.network, "retrying on another mirror", retryAfter: 0, refusedConnection: false)
    }

    /// A source serves something else than the file: drop it if another is alive, else end with `outcome`.
    private func dropOrEnd(_ source: Int, because reason: String, otherwise end: Outcome) -> FailureKind? {
        guard sources.indices.contains(where: { $0 != source && sources[$0].alive }) else {
            outcome = outcome ?? end
            return nil
        }
        if sources[source].alive { drop(source, because: reason) }
        return .transient(.network, "retrying on another mirror", retryAfter: 0, refusedConnection: false)
    }

    private func drop(_ source: Int, because reason: String) {
        sources[source].alive = false
        onNotice("dropping \(sources[source].resource.requestedURL): \(reason)")
    }

    /// Lets the verifier read the confirmed prefix: bytes whose responses are known good, never rewritten.
    private func publishPrefix() {
        guard let hasher else { return }
        let prefix = scheduler.confirmedPrefix
        if prefix > publishedPrefix {
            publishedPrefix = prefix
            hasher.advance(to: prefix)
        }
    }

    private func saveCheckpoint(durable: Bool) throws(BraidError) {
        guard let checkpoints else { return }
        var manifest = checkpoints.template
        manifest.bootID = BootID.current
        manifest.segments = scheduler.manifestSegments
        try checkpoints.store.save(manifest, durable: durable)
    }

    private func progress(now: Double) -> DownloadProgress {
        speed.record(bytes: receivedTotal, at: now)
        return DownloadProgress(
            downloadedBytes: receivedTotal,
            // What this run fetches: the whole file, or the first bytes of it under a byte limit.
            totalBytes: resource.length.map { min($0, scheduler.totalLength) },
            bytesPerSecond: speed.bytesPerSecond,
            activeConnections: scheduler.activeCount,
            retries: retries,
            segments: scheduler.order.map { index in
                let segment = scheduler.segments[index]
                var active = false
                if case .active = segment.state { active = true }
                return DownloadProgress.Segment(
                    start: segment.start,
                    end: segment.end,
                    doneBytes: segment.received,
                    isActive: active
                )
            }
        )
    }

    static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }
}

@available(*, unavailable)
extension TransferEngine: Sendable {}
