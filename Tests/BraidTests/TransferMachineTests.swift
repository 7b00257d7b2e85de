import CCurl
import SystemPackage
import Testing

@testable import Braid

/// The transfer machine is a pure value: each test feeds it events in the order `TransferEngine` does (a response
/// head before its bytes, `transferEnded` after an `abort`, answers to `reserveConnection`, `flushBuffers`,
/// `checkpoint` and `sync`) and compares the whole list of actions it returns. Files are 300 bytes, planned as
/// three segments of 100 (`0..<100`, `100..<200`, `200..<300`) or as one; time is in seconds from 0.
@Suite("TransferMachine")
struct TransferMachineTests {
    static let threeSegments: [Range<Int64>] = [0..<100, 100..<200, 200..<300]
    static let wholeFile: [Range<Int64>] = [0..<300]

    static let origin = RemoteResource(
        requestedURL: "https://example.com/file.iso",
        resolvedURL: "https://example.com/file.iso",
        length: 300,
        acceptsRanges: true,
        etag: "\"v1\"",
        lastModified: nil,
        suggestedFilename: nil,
        digests: []
    )
    /// The same file on another server, with validators of its own.
    static let mirror = RemoteResource(
        requestedURL: "https://mirror.example.net/file.iso",
        resolvedURL: "https://mirror.example.net/file.iso",
        length: 300,
        acceptsRanges: true,
        etag: "\"m1\"",
        lastModified: nil,
        suggestedFilename: nil,
        digests: []
    )

    static let reset = TransferResult.failed(TransportFailure(CURLE_RECV_ERROR, detail: "Connection reset by peer"))
    /// The wall clock at time 0 of each test: 2023-11-14 22:13:20 UTC.
    static let wallClock: Double = 1_700_000_000
    static let diskFull = BraidError(.localIO, "saving the manifest: no space left on device")

    /// A machine over `ranges`, with `slots` connections. `minimumSteal` is lowered to 10 bytes as in the
    /// scheduler's tests; tests about something else raise it, so that an idle slot does not steal.
    static func machine(
        ranges: [Range<Int64>] = threeSegments,
        progress: [Int64] = [],
        slots: Int = 3,
        minimumSteal: Int64 = 10,
        retryPolicy: RetryPolicy = RetryPolicy(),
        resources: [RemoteResource] = [origin],
        usesRanges: Bool = true,
        sharesConnections: Bool = false,
        keepsCheckpoints: Bool = false,
        writesBackSegments: Bool? = nil,
        randomSeed: UInt64 = 0,
        renewsURLs: Bool = false,
        hashesAhead: Bool = false
    ) -> TransferMachine {
        TransferMachine(
            resource: resources[0],
            sources: resources.map { Source(resource: $0, usesRanges: usesRanges) },
            scheduler: SegmentScheduler(
                ranges: ranges,
                progress: progress,
                connectionLimit: slots,
                minimumSteal: minimumSteal,
                retryPolicy: retryPolicy
            ),
            configuration: TransferMachine.Configuration(
                usesRanges: usesRanges,
                slots: slots,
                sharesConnections: sharesConnections,
                keepsCheckpoints: keepsCheckpoints,
                writesBackSegments: writesBackSegments ?? keepsCheckpoints,
                checkpointInterval: 1,
                durableInterval: 5,
                progressInterval: 0.25,
                randomSeed: randomSeed,
                renewsURLs: renewsURLs,
                hashesAhead: hashesAhead
            )
        )
    }

    static func head(_ lines: String...) -> ResponseHeaders {
        var headers = ResponseHeaders()
        for line in lines { headers.consume(line: line + "\r\n") }
        return headers
    }

    /// The 206 a well-behaved origin sends for `first...last`.
    static func partial(
        _ first: Int64, _ last: Int64, of total: Int64 = 300, version: String = "HTTP/1.1"
    ) -> ResponseHeaders {
        head(
            "\(version) 206 Partial Content",
            "Content-Range: bytes \(first)-\(last)/\(total)",
            "Content-Length: \(last - first + 1)",
            "ETag: \"v1\""
        )
    }

    static func ranged(_ range: Range<Int64>) -> TransferRequest {
        TransferRequest(range: range, skip: 0, ranged: true)
    }

    /// The segments a checkpoint records, in file order: `done` and `durable` bytes from each start.
    static func checkpointed(
        _ ranges: [Range<Int64>] = threeSegments,
        done: [Int64],
        durable: [Int64]? = nil
    ) -> [Manifest.Segment] {
        ranges.indices.map { index in
            Manifest.Segment(
                start: ranges[index].lowerBound,
                end: ranges[index].upperBound,
                done: done[index],
                durable: durable?[index] ?? 0
            )
        }
    }

    /// A progress report; `segments` are (start, end, bytes received, active).
    static func snapshot(
        downloaded: Int64,
        total: Int64? = 300,
        bytesPerSecond: Double = 0,
        active: Int = 0,
        retries: Int = 0,
        segments: [(Int64, Int64, Int64, Bool)]
    ) -> DownloadProgress {
        DownloadProgress(
            downloadedBytes: downloaded,
            totalBytes: total,
            bytesPerSecond: bytesPerSecond,
            activeConnections: active,
            retries: retries,
            segments: segments.map { DownloadProgress.Segment(start: $0.0, end: $0.1, doneBytes: $0.2, isActive: $0.3) }
        )
    }

    /// The backoff the machine chooses on its `draw`-th ended transfer: it draws one jitter from its seeded
    /// generator each time a transfer ends while running, whatever the end.
    static func backoff(
        attempt: Int,
        draw: Int,
        policy: RetryPolicy = RetryPolicy(),
        seed: UInt64 = 0
    ) -> Double {
        var generator = SplitMix64(seed: seed)
        var unit = 0.0
        for _ in 0..<draw { unit = generator.nextUnit() }
        return policy.delay(afterAttempt: attempt, retryAfter: nil, random: unit)
    }

    // MARK: - Start

    @Test("Start requests one segment per slot in file order, each from its first byte, up to the slots")
    func startsOneRequestPerSlot() {
        var machine = Self.machine(slots: 2)
        #expect(
            machine.start(now: 0) == [
                .start(slot: 0, source: 0, request: Self.ranged(0..<100)),
                .start(slot: 1, source: 0, request: Self.ranged(100..<200)),
            ]
        )
        #expect(machine.isRunning)
        #expect(machine.quietTick(now: 1) == [], "every slot is busy")
    }

    @Test("Start confirms the resumed prefix, creates the reserve, saves a first checkpoint, then starts requests")
    func startWithResumeAndCheckpoints() {
        var machine = Self.machine(progress: [40, 0, 0], keepsCheckpoints: true)
        #expect(
            machine.start(now: 0) == [
                .confirm(upTo: 40),
                .createReserve,
                .checkpoint(segments: Self.checkpointed(done: [40, 0, 0], durable: [40, 0, 0]), durable: false),
                .start(slot: 0, source: 0, request: Self.ranged(40..<100)),
                .start(slot: 1, source: 0, request: Self.ranged(100..<200)),
                .start(slot: 2, source: 0, request: Self.ranged(200..<300)),
            ]
        )
        #expect(machine.checkpointSaved() == [], "a checkpoint saved while running needs nothing more")
    }

    @Test("Complete segments are skipped on resume, and the prefix confirmed runs to the first incomplete one")
    func startSkipsCompleteSegments() {
        var machine = Self.machine(progress: [100, 40, 0], minimumSteal: 1000)
        #expect(
            machine.start(now: 0) == [
                .confirm(upTo: 140),
                .start(slot: 0, source: 0, request: Self.ranged(140..<200)),
                .start(slot: 1, source: 0, request: Self.ranged(200..<300)),
            ]
        )
    }

    @Test("A fully resumed plan completes at once, without a request")
    func fullyResumedCompletes() {
        var machine = Self.machine(progress: [100, 100, 100])
        #expect(
            machine.start(now: 0) == [
                .confirm(upTo: 300),
                .progress(
                    Self.snapshot(
                        downloaded: 300,
                        segments: [(0, 100, 100, false), (100, 200, 100, false), (200, 300, 100, false)]
                    )
                ),
                .finish(.completed(length: 300)),
            ]
        )
        #expect(machine.isFinished)
        #expect(machine.statistics == .init(fetchedBytes: 0, retries: 0, timeToFirstByte: nil))
    }

    // MARK: - Single stream

    @Test("A single stream asks for the whole body; retried, it skips what is on disk and writes after it")
    func singleStreamResumesAfterFlushed() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1, usesRanges: false)
        let whole = TransferRequest(range: 0..<300, skip: 0, ranged: false)
        #expect(whole.rangeHeader == nil)
        #expect(machine.start(now: 0) == [.start(slot: 0, source: 0, request: whole)])
        let ok = Self.head("HTTP/1.1 200 OK", "Content-Length: 300", "ETag: \"v1\"")
        #expect(machine.responseHead(slot: 0, headers: ok, now: 0) == [])
        machine.deliver(slot: 0, bytes: 120)

        let delay = Self.backoff(attempt: 1, draw: 1)
        #expect(
            machine.transferEnded(slot: 0, result: Self.reset, now: 1) == [
                .confirm(upTo: 120), .retry(reason: "Connection reset by peer", delay: delay),
            ]
        )
        let rest = TransferRequest(range: 120..<300, skip: 120, ranged: false)
        #expect(rest.rangeHeader == nil)
        #expect(machine.quietTick(now: 1 + delay) == [.start(slot: 0, source: 0, request: rest)])

        #expect(machine.responseHead(slot: 0, headers: ok, now: 1.5) == [])
        machine.deliver(slot: 0, bytes: 180)
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 2) == [
                .confirm(upTo: 300),
                .progress(
                    Self.snapshot(downloaded: 300, bytesPerSecond: 150, retries: 1, segments: [(0, 300, 300, false)])
                ),
                .finish(.completed(length: 300)),
            ]
        )
    }

    @Test("A stream of unknown length completes where its bytes end")
    func unknownLengthStreamCompletes() {
        var resource = Self.origin
        resource.length = nil
        resource.acceptsRanges = false
        var machine = Self.machine(ranges: [0..<Int64.max], slots: 1, resources: [resource], usesRanges: false)
        #expect(
            machine.start(now: 0) == [
                .start(slot: 0, source: 0, request: TransferRequest(range: 0..<Int64.max, skip: 0, ranged: false))
            ]
        )
        #expect(machine.responseHead(slot: 0, headers: Self.head("HTTP/1.1 200 OK"), now: 0) == [])
        machine.deliver(slot: 0, bytes: 1234)
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 0) == [
                .confirm(upTo: 1234),
                .progress(Self.snapshot(downloaded: 1234, total: nil, segments: [(0, 1234, 1234, false)])),
                .finish(.completed(length: 1234)),
            ]
        )
    }

    // MARK: - Response validation

    @Test("A 206 with the range and length asked for is accepted: nothing to do")
    func acceptsPartialContent() {
        var machine = Self.machine()
        _ = machine.start(now: 0)
        #expect(machine.responseHead(slot: 0, headers: Self.partial(0, 99), now: 0) == [])
        #expect(machine.responseHead(slot: 1, headers: Self.partial(100, 199), now: 0) == [])
        #expect(
            machine.slots[0]
                == .busy(
                    .init(
                        segment: 0, source: 0, request: Self.ranged(0..<100), status: 206, accepted: true, heldSource: 0
                    )))
    }

    @Test("A 206 for another range is aborted and retried after a backoff, as a protocol violation")
    func wrongContentRangeRetries() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        #expect(machine.responseHead(slot: 0, headers: Self.partial(1, 149), now: 0) == [.abort(slot: 0)])
        let delay = Self.backoff(attempt: 1, draw: 1)
        #expect(
            machine.transferEnded(slot: 0, result: .aborted, now: 1) == [
                .retry(
                    reason: "the server answered bytes 0-299/300 with Content-Range 'bytes 1-149/300'", delay: delay)
            ]
        )
        #expect(machine.quietTick(now: 1 + delay) == [.start(slot: 0, source: 0, request: Self.ranged(0..<300))])
    }

    @Test("A 206 with fewer bytes than asked, from where asked, is written, and the rest asked for at once, no retry")
    func cappedResponse() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        #expect(machine.responseHead(slot: 0, headers: Self.partial(0, 149), now: 0) == [])
        machine.deliver(slot: 0, bytes: 150)
        let ended = machine.transferEnded(slot: 0, result: .finished, now: 1)
        #expect(ended.contains(.start(slot: 0, source: 0, request: Self.ranged(150..<300))), "\(ended)")
        #expect(!ended.contains { if case .retry = $0 { true } else { false } }, "\(ended)")
        #expect(machine.retries == 0)
    }

    @Test("A 200 to a range request from the only source ends the transfer: the server ignores ranges")
    func rangesIgnored() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        let whole = Self.head("HTTP/1.1 200 OK", "Content-Length: 300", "ETag: \"v1\"")
        #expect(machine.responseHead(slot: 0, headers: whole, now: 0) == [.abort(slot: 0)])
        #expect(
            machine.transferEnded(slot: 0, result: .aborted, now: 0) == [
                .progress(Self.snapshot(downloaded: 0, segments: [(0, 300, 0, false)])),
                .finish(.rangesIgnored),
            ]
        )
    }

    @Test("A 200 with another ETag means the file changed on the server")
    func changedETag() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        let other = Self.head("HTTP/1.1 200 OK", "Content-Length: 300", "ETag: \"v2\"")
        #expect(machine.responseHead(slot: 0, headers: other, now: 0) == [.abort(slot: 0)])
        #expect(
            machine.transferEnded(slot: 0, result: .aborted, now: 0) == [
                .progress(Self.snapshot(downloaded: 0, segments: [(0, 300, 0, false)])),
                .finish(.remoteChanged("the file on the server changed since the download started")),
            ]
        )
    }

    @Test("A Content-Range total other than the probed length ends the transfer, to probe again")
    func lengthDisagrees() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        #expect(machine.responseHead(slot: 0, headers: Self.partial(0, 299, of: 400), now: 0) == [.abort(slot: 0)])
        #expect(
            machine.transferEnded(slot: 0, result: .aborted, now: 0) == [
                .progress(Self.snapshot(downloaded: 0, segments: [(0, 300, 0, false)])),
                .finish(.lengthDisagrees("the server's Content-Range says the file is 400 bytes, its HEAD said 300")),
            ]
        )
    }

    @Test("A 416 means the file changed; a bodiless response is judged when its transfer finishes")
    func rangeNotSatisfiable() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        let head = Self.head("HTTP/1.1 416 Range Not Satisfiable", "Content-Range: bytes */300")
        #expect(machine.responseHead(slot: 0, headers: head, now: 0) == [.abort(slot: 0)])
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 0) == [
                .progress(Self.snapshot(downloaded: 0, segments: [(0, 300, 0, false)])),
                .finish(.remoteChanged("the server can no longer serve the range (HTTP 416): the file changed")),
            ]
        )
    }

    @Test("A 404 from the only source fails the download with its status")
    func notFoundFails() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        #expect(
            machine.responseHead(slot: 0, headers: Self.head("HTTP/1.1 404 Not Found"), now: 0) == [.abort(slot: 0)])
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 0) == [
                .progress(Self.snapshot(downloaded: 0, segments: [(0, 300, 0, false)])),
                .finish(
                    .failed(BraidError(.protocolViolation, "the server has no such file (HTTP 404)", httpStatus: 404))
                ),
            ]
        )
    }

    @Test("A 503 with Retry-After is retried after exactly that delay")
    func busyWithRetryAfter() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        let busy = Self.head("HTTP/1.1 503 Service Unavailable", "Retry-After: 7")
        #expect(machine.responseHead(slot: 0, headers: busy, now: 1) == [.abort(slot: 0)])
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 1) == [
                .retry(reason: "the server answered 503 (busy)", delay: 7)
            ]
        )
        #expect(machine.quietTick(now: 7.5) == [])
        #expect(machine.quietTick(now: 8) == [.start(slot: 0, source: 0, request: Self.ranged(0..<300))])
    }

    @Test("A Retry-After date counts from the wall clock the executor read when the head arrived")
    func busyUntilDate() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        // 2023-11-14 22:13:27 UTC: 7 seconds after the wall clock below.
        let busy = Self.head("HTTP/1.1 503 Service Unavailable", "Retry-After: Tue, 14 Nov 2023 22:13:27 GMT")
        let actions = machine.responseHead(slot: 0, headers: busy, now: 1, wallClock: 1_700_000_000)
        #expect(actions == [.abort(slot: 0)])
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 1) == [
                .retry(reason: "the server answered 503 (busy)", delay: 7)
            ]
        )
    }

    @Test("A head is judged once: a second one for the same attempt is ignored")
    func headJudgedOnce() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        #expect(machine.responseHead(slot: 0, headers: Self.partial(0, 299), now: 0) == [])
        #expect(machine.responseHead(slot: 0, headers: Self.head("HTTP/1.1 404 Not Found"), now: 0) == [])
    }

    // MARK: - Confirmation

    @Test("Written bytes are confirmed only when their transfer ends, even a failed one")
    func confirmedWhenTransferEnds() {
        var machine = Self.machine(minimumSteal: 1000)
        _ = machine.start(now: 0)
        #expect(machine.responseHead(slot: 0, headers: Self.partial(0, 99), now: 0) == [])
        machine.deliver(slot: 0, bytes: 60)
        #expect(machine.quietTick(now: 0.5) == [])
        #expect(machine.confirmedUpTo == 0)

        #expect(
            machine.transferEnded(slot: 0, result: Self.reset, now: 1) == [
                .confirm(upTo: 60),
                .retry(reason: "Connection reset by peer", delay: Self.backoff(attempt: 1, draw: 1)),
            ]
        )
        #expect(machine.confirmedUpTo == 60)
    }

    @Test("A segment's bytes join the confirmed prefix only once every segment before it is confirmed")
    func confirmedInFileOrder() {
        var machine = Self.machine(minimumSteal: 1000)
        _ = machine.start(now: 0)
        machine.deliver(slot: 1, bytes: 100)
        #expect(machine.transferEnded(slot: 1, result: .finished, now: 1) == [])
        machine.deliver(slot: 0, bytes: 100)
        #expect(machine.transferEnded(slot: 0, result: .finished, now: 2) == [.confirm(upTo: 200)])
    }

    @Test("Bytes past the range the server announced discard the attempt: nothing confirmed, retried from its start")
    func overrunDiscardsAttempt() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        #expect(machine.responseHead(slot: 0, headers: Self.partial(0, 299), now: 0) == [])
        machine.deliver(slot: 0, bytes: 300)
        #expect(machine.overran(slot: 0) == [.abort(slot: 0)])

        let delay = Self.backoff(attempt: 1, draw: 1)
        #expect(
            machine.transferEnded(slot: 0, result: .aborted, now: 1) == [
                .retry(reason: "the server sent more bytes than the range it announced", delay: delay)
            ]
        )
        #expect(machine.confirmedUpTo == 0)
        #expect(machine.scheduler.flushedBytes == 0)
        #expect(machine.quietTick(now: 1 + delay) == [.start(slot: 0, source: 0, request: Self.ranged(0..<300))])
    }

    @Test("Bytes past a segment shrunk by a steal only mean the segment is done")
    func overrunAfterStealIsDone() {
        var machine = Self.machine()
        _ = machine.start(now: 0)
        machine.deliver(slot: 0, bytes: 100)
        machine.deliver(slot: 1, bytes: 20)
        machine.deliver(slot: 2, bytes: 95)
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 1) == [
                .confirm(upTo: 100),
                .shrink(slot: 1, end: 160),
                .start(slot: 0, source: 0, request: Self.ranged(160..<200)),
            ]
        )
        machine.deliver(slot: 0, bytes: 35)
        machine.deliver(slot: 1, bytes: 40)
        #expect(machine.overran(slot: 1) == [.abort(slot: 1)])
        #expect(machine.transferEnded(slot: 1, result: .aborted, now: 2) == [.confirm(upTo: 160)])
        #expect(machine.statistics.retries == 0)
    }

    /// Over HTTP/1.1 a response cut short by a steal reads its rest and drops it when that comes soon, so that its
    /// connection stays open; over HTTP/2, or when the rest would come slowly, it is ended.
    @Test("A response cut short by a steal is read to its end over HTTP/1.1 when its rest comes soon, else ended")
    func stolenRestDrainedOrEnded() {
        /// Slot 1's response (100..<200) cut at 160 by a steal at `now`, its head's protocol `version`, 60 bytes in.
        func cut(at now: Double, version: String) -> TransferMachine {
            var machine = Self.machine()
            _ = machine.start(now: 0)
            _ = machine.responseHead(slot: 1, headers: Self.partial(100, 199, version: version), now: 0)
            machine.deliver(slot: 0, bytes: 100)
            machine.deliver(slot: 1, bytes: 20)
            machine.deliver(slot: 2, bytes: 95)
            #expect(machine.transferEnded(slot: 0, result: .finished, now: now).contains(.shrink(slot: 1, end: 160)))
            machine.deliver(slot: 0, bytes: 35)
            machine.deliver(slot: 1, bytes: 40)
            return machine
        }
        // 60 bytes in a millisecond: the 40 past the cut come in well within `drainSeconds`.
        var fast = cut(at: 0.001, version: "HTTP/1.1")
        #expect(fast.overran(slot: 1) == [], "the rest is read and dropped: no abort")
        #expect(fast.overran(slot: 1) == [], "and every later chunk past the cut as well")
        #expect(fast.transferEnded(slot: 1, result: .finished, now: 0.002) == [.confirm(upTo: 160)])
        #expect(fast.statistics.retries == 0)
        // 60 bytes in a second: the rest would take most of one.
        var slow = cut(at: 1, version: "HTTP/1.1")
        #expect(slow.overran(slot: 1) == [.abort(slot: 1)])
        #expect(slow.transferEnded(slot: 1, result: .aborted, now: 2) == [.confirm(upTo: 160)])
        // A stream of an HTTP/2 connection ends alone.
        var multiplexed = cut(at: 0.001, version: "HTTP/2")
        #expect(multiplexed.overran(slot: 1) == [.abort(slot: 1)])
        #expect(multiplexed.transferEnded(slot: 1, result: .aborted, now: 0.002) == [.confirm(upTo: 160)])
    }

    // MARK: - Work stealing

    @Test("An idle slot steals the second half of the active segment with the most left, shrinking its slot first")
    func idleSlotSteals() {
        var machine = Self.machine()
        _ = machine.start(now: 0)
        machine.deliver(slot: 0, bytes: 100)
        machine.deliver(slot: 1, bytes: 20)
        machine.deliver(slot: 2, bytes: 60)
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 1) == [
                .confirm(upTo: 100),
                .shrink(slot: 1, end: 160),
                .start(slot: 0, source: 0, request: Self.ranged(160..<200)),
            ]
        )
        #expect(machine.scheduler.order.map { machine.scheduler.segments[$0].start } == [0, 100, 160, 200])
    }

    @Test("With a single segment and two slots, the second slot steals at once")
    func stealAtStart() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 2)
        #expect(
            machine.start(now: 0) == [
                .start(slot: 0, source: 0, request: Self.ranged(0..<300)),
                .shrink(slot: 0, end: 150),
                .start(slot: 1, source: 0, request: Self.ranged(150..<300)),
            ]
        )
    }

    // MARK: - Retries and backoff

    @Test("A transient failure is retried after a jittered backoff, starting again only at a tick at its due time")
    func transientFailureBacksOff() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        let delay = Self.backoff(attempt: 1, draw: 1)
        #expect((0.125...0.25).contains(delay))
        #expect(
            machine.transferEnded(slot: 0, result: Self.reset, now: 1) == [
                .retry(reason: "Connection reset by peer", delay: delay)
            ]
        )
        #expect(machine.quietTick(now: 1 + delay / 2) == [])
        #expect(machine.quietTick(now: 1 + delay) == [.start(slot: 0, source: 0, request: Self.ranged(0..<300))])
        #expect(machine.statistics.retries == 1)
    }

    @Test("The jitter comes from the configured seed: the same seed replays the same delays")
    func jitterFromSeed() {
        func firstDelay(seed: UInt64) -> [TransferMachine.Action] {
            var machine = Self.machine(ranges: Self.wholeFile, slots: 1, randomSeed: seed)
            _ = machine.start(now: 0)
            return machine.transferEnded(slot: 0, result: Self.reset, now: 0)
        }
        #expect(firstDelay(seed: 7) == firstDelay(seed: 7))
        #expect(firstDelay(seed: 7) != firstDelay(seed: 8))
        #expect(
            firstDelay(seed: 7) == [
                .retry(reason: "Connection reset by peer", delay: Self.backoff(attempt: 1, draw: 1, seed: 7))
            ]
        )
    }

    @Test("The poll timeout shrinks toward a waiting retry's due time when nothing is active")
    func pollTimeoutFollowsRetry() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 10)
        #expect(machine.pollTimeout(now: 10) == 0.1, "a transfer is active")
        let busy = Self.head("HTTP/1.1 503 Service Unavailable", "Retry-After: 7")
        _ = machine.responseHead(slot: 0, headers: busy, now: 10)
        _ = machine.transferEnded(slot: 0, result: .finished, now: 10)
        #expect(machine.pollTimeout(now: 10) == 0.1)
        #expect(machine.pollTimeout(now: 16.9375) == 0.0625)
        // Past due and still waiting, it could not start at the tick (a budget refused it): no busy polling.
        #expect(machine.pollTimeout(now: 17.5) == 0.1)
    }

    @Test("After the policy's attempts fail without progress, the download fails")
    func givesUpAfterMaximumAttempts() {
        let policy = RetryPolicy(baseDelay: 0)
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1, retryPolicy: policy)
        _ = machine.start(now: 0)
        let busy = Self.head("HTTP/1.1 503 Service Unavailable")
        for _ in 1..<policy.maximumAttempts {
            #expect(machine.responseHead(slot: 0, headers: busy, now: 0) == [.abort(slot: 0)])
            #expect(
                machine.transferEnded(slot: 0, result: .finished, now: 0) == [
                    .retry(reason: "the server answered 503 (busy)", delay: 0),
                    .start(slot: 0, source: 0, request: Self.ranged(0..<300)),
                ]
            )
        }
        #expect(machine.responseHead(slot: 0, headers: busy, now: 0) == [.abort(slot: 0)])
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 0) == [
                .progress(Self.snapshot(downloaded: 0, retries: 5, segments: [(0, 300, 0, false)])),
                .finish(
                    .failed(
                        BraidError(
                            .protocolViolation, "the server answered 503 (busy); gave up after 6 attempts",
                            httpStatus: 503)
                    )
                ),
            ]
        )
    }

    @Test("A Retry-After longer than the policy allows fails the download at once")
    func retryAfterTooLongFails() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        let busy = Self.head("HTTP/1.1 503 Service Unavailable", "Retry-After: 3600")
        #expect(machine.responseHead(slot: 0, headers: busy, now: 0) == [.abort(slot: 0)])
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 0) == [
                .progress(Self.snapshot(downloaded: 0, segments: [(0, 300, 0, false)])),
                .finish(
                    .failed(
                        BraidError(
                            .protocolViolation,
                            "the server answered 503 (busy) and asked to retry after 3600 s",
                            httpStatus: 503
                        )
                    )
                ),
            ]
        )
    }

    // MARK: - Sources

    @Test("Requests spread over the sources: each goes to the live source with the fewest connections")
    func requestsSpreadOverSources() {
        var machine = Self.machine(resources: [Self.origin, Self.mirror])
        #expect(
            machine.start(now: 0) == [
                .start(slot: 0, source: 0, request: Self.ranged(0..<100)),
                .start(slot: 1, source: 1, request: Self.ranged(100..<200)),
                .start(slot: 2, source: 0, request: Self.ranged(200..<300)),
            ]
        )
    }

    @Test("A source that fails fatally is dropped, and its segment retried on another at once")
    func fatalFailureDropsSource() {
        var machine = Self.machine(slots: 2, minimumSteal: 1000, resources: [Self.origin, Self.mirror])
        _ = machine.start(now: 0)
        #expect(
            machine.responseHead(slot: 1, headers: Self.head("HTTP/1.1 404 Not Found"), now: 1) == [.abort(slot: 1)])
        #expect(
            machine.transferEnded(slot: 1, result: .finished, now: 1) == [
                .notice("dropping https://mirror.example.net/file.iso: the server has no such file (HTTP 404)"),
                .retry(reason: "retrying on another mirror", delay: 0),
                .start(slot: 1, source: 0, request: Self.ranged(100..<200)),
            ]
        )
        #expect(machine.sources.map(\.alive) == [true, false])
    }

    @Test("A mirror is judged against its own validators, and dropped when it ignores ranges")
    func mirrorIgnoringRangesIsDropped() {
        var machine = Self.machine(slots: 2, minimumSteal: 1000, resources: [Self.origin, Self.mirror])
        _ = machine.start(now: 0)
        let whole = Self.head("HTTP/1.1 200 OK", "Content-Length: 300", "ETag: \"m1\"")
        #expect(machine.responseHead(slot: 1, headers: whole, now: 0) == [.abort(slot: 1)])
        #expect(
            machine.transferEnded(slot: 1, result: .aborted, now: 0) == [
                .notice("dropping https://mirror.example.net/file.iso: it ignores byte ranges"),
                .retry(reason: "retrying on another mirror", delay: 0),
                .start(slot: 1, source: 0, request: Self.ranged(100..<200)),
            ]
        )
    }

    @Test("Three failures in a row drop a source while another is alive")
    func repeatedFailuresDropSource() {
        var machine = Self.machine(
            slots: 2, minimumSteal: 1000, retryPolicy: RetryPolicy(baseDelay: 0), resources: [Self.origin, Self.mirror])
        _ = machine.start(now: 0)
        for _ in 1..<Source.maximumFailures {
            #expect(
                machine.transferEnded(slot: 1, result: Self.reset, now: 0) == [
                    .retry(reason: "Connection reset by peer", delay: 0),
                    .start(slot: 1, source: 1, request: Self.ranged(100..<200)),
                ]
            )
        }
        #expect(
            machine.transferEnded(slot: 1, result: Self.reset, now: 0) == [
                .notice("dropping https://mirror.example.net/file.iso: Connection reset by peer"),
                .retry(reason: "retrying on another mirror", delay: 0),
                .start(slot: 1, source: 0, request: Self.ranged(100..<200)),
            ]
        )
    }

    @Test("A success resets a source's count of failures in a row")
    func successResetsSourceFailures() {
        var machine = Self.machine(
            slots: 2, minimumSteal: 1000, retryPolicy: RetryPolicy(baseDelay: 0), resources: [Self.origin, Self.mirror])
        _ = machine.start(now: 0)
        _ = machine.transferEnded(slot: 1, result: Self.reset, now: 0)
        _ = machine.transferEnded(slot: 1, result: Self.reset, now: 0)
        #expect(machine.sources[1].failures == 2)
        machine.deliver(slot: 1, bytes: 100)
        #expect(
            machine.transferEnded(slot: 1, result: .finished, now: 0) == [
                .start(slot: 1, source: 1, request: Self.ranged(200..<300))
            ]
        )
        #expect(machine.sources[1].failures == 0)
    }

    @Test("The last live source is never dropped: its failures count as they are")
    func lastSourceIsKept() {
        var machine = Self.machine(
            ranges: Self.wholeFile, slots: 1, retryPolicy: RetryPolicy(baseDelay: 0),
            resources: [Self.origin, Self.mirror])
        _ = machine.start(now: 0)
        _ = machine.responseHead(slot: 0, headers: Self.head("HTTP/1.1 410 Gone"), now: 0)
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 0) == [
                .notice("dropping https://example.com/file.iso: the server has no such file (HTTP 410)"),
                .retry(reason: "retrying on another mirror", delay: 0),
                .start(slot: 0, source: 1, request: Self.ranged(0..<300)),
            ]
        )
        for failure in 1...Source.maximumFailures {
            let written = Int64(10 * failure)
            machine.deliver(slot: 0, bytes: 10)
            #expect(
                machine.transferEnded(slot: 0, result: Self.reset, now: 0) == [
                    .confirm(upTo: written),
                    .retry(reason: "Connection reset by peer", delay: 0),
                    .start(slot: 0, source: 1, request: Self.ranged(written..<300)),
                ]
            )
        }
        #expect(machine.sources.map(\.alive) == [false, true])
        #expect(machine.sources[1].failures == Source.maximumFailures)
    }

    // MARK: - Shared connection budget

    @Test("With a shared budget, each start waits for a granted connection, one request at a time")
    func reservesBeforeStarting() {
        var machine = Self.machine(slots: 2, minimumSteal: 1000, sharesConnections: true)
        #expect(machine.start(now: 0) == [.reserveConnection(source: 0)])
        #expect(
            machine.connectionReserved(source: 0, granted: true, now: 0) == [
                .start(slot: 0, source: 0, request: Self.ranged(0..<100)),
                .reserveConnection(source: 0),
            ]
        )
    }

    @Test("A refused connection is not asked for again until the next tick; every transfer end releases one")
    func refusedUntilNextTick() {
        var machine = Self.machine(slots: 2, minimumSteal: 1000, sharesConnections: true)
        _ = machine.start(now: 0)
        _ = machine.connectionReserved(source: 0, granted: true, now: 0)
        #expect(machine.connectionReserved(source: 0, granted: false, now: 0) == [])

        machine.deliver(slot: 0, bytes: 100)
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 1) == [
                .releaseConnection(source: 0), .confirm(upTo: 100),
            ]
        )
        #expect(machine.quietTick(now: 2) == [.reserveConnection(source: 0)])
        #expect(
            machine.connectionReserved(source: 0, granted: true, now: 2) == [
                .start(slot: 0, source: 0, request: Self.ranged(100..<200)),
                .reserveConnection(source: 0),
            ]
        )
    }

    @Test("A connection granted when there is no work left for it is released at once")
    func grantWithoutWorkIsReleased() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 2, sharesConnections: true)
        _ = machine.start(now: 0)
        #expect(
            machine.connectionReserved(source: 0, granted: true, now: 0) == [
                .start(slot: 0, source: 0, request: Self.ranged(0..<300)),
                .reserveConnection(source: 0),
            ]
        )
        machine.deliver(slot: 0, bytes: 295)
        #expect(machine.connectionReserved(source: 0, granted: true, now: 0) == [.releaseConnection(source: 0)])
    }

    @Test(
        "A connection granted after the transfer began to end goes straight back; a refusal needs nothing",
        arguments: [true, false])
    func answerAfterEnd(granted: Bool) {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 2, sharesConnections: true)
        #expect(machine.start(now: 0) == [.reserveConnection(source: 0)])
        #expect(machine.stopRequested(.interrupted).last == .finish(.stopped(.interrupted)))
        #expect(
            machine.connectionReserved(source: 0, granted: granted, now: 0)
                == (granted ? [.releaseConnection(source: 0)] : []))
    }

    @Test("Transfers aborted by a stop release their connections too")
    func stopReleasesConnections() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1, sharesConnections: true)
        _ = machine.start(now: 0)
        _ = machine.connectionReserved(source: 0, granted: true, now: 0)
        #expect(machine.stopRequested(.interrupted) == [.abort(slot: 0)])
        #expect(
            machine.transferEnded(slot: 0, result: .aborted, now: 0) == [
                .releaseConnection(source: 0),
                .progress(Self.snapshot(downloaded: 0, segments: [(0, 300, 0, false)])),
                .finish(.stopped(.interrupted)),
            ]
        )
    }

    @Test("A grant nobody asked for is a programming error")
    func unaskedGrantTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = TransferMachineTests.machine(sharesConnections: true)
            _ = machine.connectionReserved(source: 0, granted: true, now: 0)
        }
    }

    // MARK: - Checkpoints and durability

    @Test("Each checkpoint interval flushes the buffers; a checkpoint follows only if flushed bytes moved")
    func checkpointAfterFlush() {
        var machine = Self.machine(slots: 1, minimumSteal: 1000, keepsCheckpoints: true)
        _ = machine.start(now: 0)
        #expect(machine.quietTick(now: 0.5) == [])
        #expect(machine.quietTick(now: 1) == [.flushBuffers])
        #expect(machine.buffersFlushed() == [])

        machine.deliver(slot: 0, bytes: 40)
        #expect(machine.quietTick(now: 1.5) == [])
        #expect(machine.quietTick(now: 2) == [.flushBuffers])
        #expect(
            machine.buffersFlushed() == [.checkpoint(segments: Self.checkpointed(done: [40, 0, 0]), durable: false)]
        )
        #expect(machine.checkpointSaved() == [])
        #expect(machine.buffersFlushed() == [], "nothing moved since")
    }

    @Test("A sync falls due every durable interval, never two at once; its end saves a durable checkpoint")
    func syncThenDurableCheckpoint() {
        var machine = Self.machine(slots: 1, minimumSteal: 1000, keepsCheckpoints: true)
        _ = machine.start(now: 0)
        machine.deliver(slot: 0, bytes: 40)
        #expect(machine.quietTick(now: 5) == [.flushBuffers, .sync(marks: [40, 0, 0])])

        machine.deliver(slot: 0, bytes: 20)
        #expect(machine.quietTick(now: 10) == [.flushBuffers], "the first sync is still in flight")
        #expect(
            machine.syncCompleted(marks: [40, 0, 0]) == [
                .checkpoint(segments: Self.checkpointed(done: [60, 0, 0], durable: [40, 0, 0]), durable: true)
            ]
        )
        #expect(machine.quietTick(now: 15) == [.flushBuffers, .sync(marks: [60, 0, 0])])
    }

    @Test("A completed segment is written back to disk without waiting")
    func completedSegmentWrittenBack() {
        var machine = Self.machine(slots: 1, minimumSteal: 1000, keepsCheckpoints: true)
        _ = machine.start(now: 0)
        machine.deliver(slot: 0, bytes: 100)
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 1) == [
                .confirm(upTo: 100),
                .writeBack(0..<100),
                .start(slot: 0, source: 0, request: Self.ranged(100..<200)),
            ]
        )
    }

    @Test("Without a flush before the rename (--no-fsync), a completed segment is left to the system's writeback")
    func completedSegmentNotWrittenBackWithoutFlush() {
        var machine = Self.machine(slots: 1, minimumSteal: 1000, keepsCheckpoints: true, writesBackSegments: false)
        _ = machine.start(now: 0)
        machine.deliver(slot: 0, bytes: 100)
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 1) == [
                .confirm(upTo: 100),
                .start(slot: 0, source: 0, request: Self.ranged(100..<200)),
            ]
        )
    }

    @Test("A checkpoint failing while running fails the download, after the final checkpoint")
    func checkpointFailureWhileRunning() {
        var machine = Self.machine(slots: 1, minimumSteal: 1000, keepsCheckpoints: true)
        _ = machine.start(now: 0)
        #expect(machine.checkpointFailed(Self.diskFull) == [.abort(slot: 0)])
        #expect(
            machine.transferEnded(slot: 0, result: .aborted, now: 0) == [
                .checkpoint(segments: Self.checkpointed(done: [0, 0, 0]), durable: false)
            ]
        )
        #expect(
            machine.checkpointSaved() == [
                .progress(
                    Self.snapshot(
                        downloaded: 0, segments: [(0, 100, 0, false), (100, 200, 0, false), (200, 300, 0, false)])
                ),
                .finish(.failed(Self.diskFull)),
            ]
        )
    }

    @Test("A failing final checkpoint is tried again with the reserve given back")
    func finalCheckpointRetriedWithoutReserve() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1, keepsCheckpoints: true)
        #expect(
            machine.start(now: 0) == [
                .createReserve,
                .checkpoint(segments: Self.checkpointed(Self.wholeFile, done: [0]), durable: false),
                .start(slot: 0, source: 0, request: Self.ranged(0..<300)),
            ]
        )
        machine.deliver(slot: 0, bytes: 300)
        let final = TransferMachine.Action.checkpoint(
            segments: Self.checkpointed(Self.wholeFile, done: [300]), durable: false)
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 1) == [
                .confirm(upTo: 300), .writeBack(0..<300), final,
            ]
        )
        #expect(machine.checkpointFailed(Self.diskFull) == [.releaseReserve, final])
        #expect(
            machine.checkpointSaved() == [
                .progress(Self.snapshot(downloaded: 300, bytesPerSecond: 300, segments: [(0, 300, 300, false)])),
                .finish(.completed(length: 300)),
            ]
        )
    }

    @Test("A completed download whose final checkpoint fails twice fails")
    func finalCheckpointFailsTwiceAfterCompletion() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1, keepsCheckpoints: true)
        _ = machine.start(now: 0)
        machine.deliver(slot: 0, bytes: 300)
        _ = machine.transferEnded(slot: 0, result: .finished, now: 1)
        _ = machine.checkpointFailed(Self.diskFull)
        #expect(
            machine.checkpointFailed(Self.diskFull) == [
                .progress(Self.snapshot(downloaded: 300, bytesPerSecond: 300, segments: [(0, 300, 300, false)])),
                .finish(.failed(Self.diskFull)),
            ]
        )
    }

    @Test("A stopped download whose final checkpoint fails twice stays stopped: the older checkpoint holds")
    func finalCheckpointFailsTwiceAfterStop() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1, keepsCheckpoints: true)
        _ = machine.start(now: 0)
        machine.deliver(slot: 0, bytes: 120)
        #expect(machine.stopRequested(.paused) == [.abort(slot: 0)])
        let final = TransferMachine.Action.checkpoint(
            segments: Self.checkpointed(Self.wholeFile, done: [120]), durable: false)
        #expect(machine.transferEnded(slot: 0, result: .aborted, now: 1) == [.confirm(upTo: 120), final])
        #expect(machine.checkpointFailed(Self.diskFull) == [.releaseReserve, final])
        #expect(
            machine.checkpointFailed(Self.diskFull) == [
                .progress(Self.snapshot(downloaded: 120, bytesPerSecond: 120, segments: [(0, 300, 120, false)])),
                .finish(.stopped(.paused)),
            ]
        )
    }

    @Test("A failed sync fails the download")
    func syncFailureFails() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1, keepsCheckpoints: true)
        _ = machine.start(now: 0)
        #expect(machine.quietTick(now: 5) == [.flushBuffers, .sync(marks: [0])])
        #expect(machine.syncFailed(Self.diskFull) == [.abort(slot: 0)])
        #expect(
            machine.transferEnded(slot: 0, result: .aborted, now: 5) == [
                .checkpoint(segments: Self.checkpointed(Self.wholeFile, done: [0]), durable: false)
            ]
        )
        #expect(
            machine.checkpointSaved() == [
                .progress(Self.snapshot(downloaded: 0, segments: [(0, 300, 0, false)])),
                .finish(.failed(Self.diskFull)),
            ]
        )
    }

    // MARK: - Progress

    @Test("Progress is reported at the first tick, then every progress interval, with resumed bytes included")
    func progressReports() {
        let policy = RetryPolicy(baseDelay: 10)
        var machine = Self.machine(progress: [40, 0, 0], minimumSteal: 1000, retryPolicy: policy)
        _ = machine.start(now: 0)
        #expect(
            machine.tick(now: 0) == [
                .progress(
                    Self.snapshot(
                        downloaded: 40, active: 3,
                        segments: [(0, 100, 40, true), (100, 200, 0, true), (200, 300, 0, true)]
                    )
                )
            ]
        )

        machine.bytesReceived(slot: 1, count: 30)
        let delay = Self.backoff(attempt: 1, draw: 1, policy: policy)
        #expect(
            machine.transferEnded(slot: 2, result: Self.reset, now: 0.125) == [
                .retry(reason: "Connection reset by peer", delay: delay)
            ]
        )
        #expect(machine.tick(now: 0.2) == [])
        // No rate over a quarter of a second (`SpeedMeter.minimumSpan`); one over half a second.
        #expect(
            machine.tick(now: 0.25) == [
                .progress(
                    Self.snapshot(
                        downloaded: 70, bytesPerSecond: 0, active: 2, retries: 1,
                        segments: [(0, 100, 40, true), (100, 200, 30, true), (200, 300, 0, false)]
                    )
                )
            ]
        )
        machine.bytesReceived(slot: 1, count: 30)
        #expect(
            machine.tick(now: 0.5) == [
                .progress(
                    Self.snapshot(
                        downloaded: 100, bytesPerSecond: 120, active: 2, retries: 1,
                        segments: [(0, 100, 40, true), (100, 200, 60, true), (200, 300, 0, false)]
                    )
                )
            ]
        )
    }

    // MARK: - Stop

    @Test("A stop aborts every active transfer, keeps what each wrote, saves a checkpoint, then finishes stopped")
    func stopKeepsWrittenBytes() {
        var machine = Self.machine(minimumSteal: 1000, keepsCheckpoints: true)
        _ = machine.start(now: 0)
        machine.deliver(slot: 0, bytes: 30)
        machine.deliver(slot: 1, bytes: 50)

        #expect(machine.stopRequested(.paused) == [.abort(slot: 0), .abort(slot: 1), .abort(slot: 2)])
        #expect(machine.tick(now: 1) == [], "nothing falls due while the transfer ends")
        #expect(machine.transferEnded(slot: 0, result: .aborted, now: 2) == [.confirm(upTo: 30)])
        #expect(machine.transferEnded(slot: 1, result: .aborted, now: 2) == [])
        #expect(
            machine.transferEnded(slot: 2, result: .aborted, now: 2) == [
                .checkpoint(segments: Self.checkpointed(done: [30, 50, 0]), durable: false)
            ]
        )
        #expect(
            machine.checkpointSaved() == [
                .progress(
                    Self.snapshot(
                        downloaded: 80, bytesPerSecond: 40,
                        segments: [(0, 100, 30, false), (100, 200, 50, false), (200, 300, 0, false)]
                    )
                ),
                .finish(.stopped(.paused)),
            ]
        )
        #expect(machine.isFinished)
        #expect(machine.tick(now: 3) == [])
        #expect(machine.stopRequested(.interrupted) == [])
    }

    @Test("A stop while only retries are waiting finishes at once")
    func stopWhileWaiting() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        _ = machine.transferEnded(slot: 0, result: Self.reset, now: 0)
        #expect(
            machine.stopRequested(.cancelled(removingPartialFile: false)) == [
                .progress(Self.snapshot(downloaded: 0, retries: 1, segments: [(0, 300, 0, false)])),
                .finish(.stopped(.cancelled(removingPartialFile: false))),
            ]
        )
    }

    // MARK: - Statistics

    @Test("Statistics count fetched bytes without resumed ones, retries, and the time to the first accepted head")
    func statistics() {
        var machine = Self.machine(ranges: Self.wholeFile, progress: [40], slots: 1)
        #expect(
            machine.start(now: 10) == [
                .confirm(upTo: 40), .start(slot: 0, source: 0, request: Self.ranged(40..<300)),
            ]
        )
        #expect(machine.statistics == .init(fetchedBytes: 0, retries: 0, timeToFirstByte: nil))

        let busy = Self.head("HTTP/1.1 503 Service Unavailable", "Retry-After: 1")
        _ = machine.responseHead(slot: 0, headers: busy, now: 10.25)
        _ = machine.transferEnded(slot: 0, result: .finished, now: 10.25)
        #expect(machine.statistics == .init(fetchedBytes: 0, retries: 1, timeToFirstByte: nil), "a refused head")

        #expect(machine.quietTick(now: 11.25) == [.start(slot: 0, source: 0, request: Self.ranged(40..<300))])
        #expect(machine.responseHead(slot: 0, headers: Self.partial(40, 299), now: 11.5) == [])
        machine.deliver(slot: 0, bytes: 100)
        #expect(machine.statistics == .init(fetchedBytes: 100, retries: 1, timeToFirstByte: 1.5))
    }

    // MARK: - Found while writing these tests, and fixed

    @Test("A give-up after network errors carries libcurl's code and no HTTP status; a write failure keeps its errno")
    func failuresKeepTheirCause() throws {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1, retryPolicy: RetryPolicy(maximumAttempts: 1))
        _ = machine.start(now: 0)
        let actions = machine.transferEnded(slot: 0, result: Self.reset, now: 1)
        guard case let .finish(.failed(error)) = actions.last else {
            Issue.record("expected a failure, got \(actions)")
            return
        }
        #expect(error.httpStatus == nil, "no response arrived")
        #expect(error.cause?.curlCode == Int(CURLE_RECV_ERROR.rawValue))

        var writing = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = writing.start(now: 0)
        _ = writing.responseHead(slot: 0, headers: Self.partial(0, 299), now: 0)
        let full = BraidError(.localIO, "writing at offset 0: no space left on device", cause: .errno(.noSpace))
        #expect(writing.writeFailed(slot: 0, error: full) == [.abort(slot: 0)])
        let ended = writing.transferEnded(slot: 0, result: .aborted, now: 1)
        guard case let .finish(.failed(written)) = ended.last else {
            Issue.record("expected a failure, got \(ended)")
            return
        }
        #expect(written.cause?.errno == .noSpace)
        #expect(written.httpStatus == nil, "the server's 206 was not the problem")
    }

    @Test("A 206 with another ETag means the file changed, even without If-Range to catch it")
    func partialContentWithNewValidator() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        let changed = Self.head(
            "HTTP/1.1 206 Partial Content", "Content-Range: bytes 0-299/300", "Content-Length: 300", "ETag: \"v2\"")
        #expect(machine.responseHead(slot: 0, headers: changed, now: 0) == [.abort(slot: 0)])
        let actions = machine.transferEnded(slot: 0, result: .aborted, now: 1)
        #expect(actions.last == .finish(.remoteChanged("the file on the server changed since the download started")))
    }

    @Test("Bytes thrown away while a sync runs are not made durable by it, nor what rewrites them")
    func syncAfterDiscardIsNotCredited() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1, keepsCheckpoints: true)
        _ = machine.start(now: 0)
        _ = machine.responseHead(slot: 0, headers: Self.partial(0, 299), now: 0)
        machine.deliver(slot: 0, bytes: 300)
        let tick = machine.quietTick(now: 5)
        #expect(tick.contains(.sync(marks: [300])))
        // The server goes on past its range: the 300 bytes are thrown away, and fetched again after the sync began.
        #expect(machine.overran(slot: 0) == [.abort(slot: 0)])
        _ = machine.transferEnded(slot: 0, result: .aborted, now: 5.5)
        _ = machine.quietTick(now: 6)
        _ = machine.responseHead(slot: 0, headers: Self.partial(0, 299), now: 6)
        machine.deliver(slot: 0, bytes: 300)
        let synced = machine.syncCompleted(marks: [300])
        #expect(
            synced == [
                .checkpoint(segments: Self.checkpointed(Self.wholeFile, done: [300], durable: [0]), durable: true)
            ])
    }

    @Test("A whole-file digest reads ahead of a response's end, and forgets what a response thrown away wrote")
    func hashesAhead() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1, hashesAhead: true)
        _ = machine.start(now: 0)
        _ = machine.responseHead(slot: 0, headers: Self.partial(0, 299), now: 0)
        machine.deliver(slot: 0, bytes: 150)
        let early = machine.quietTick(now: 0.1)
        #expect(!early.contains(.hashAhead(upTo: 150)), "less than a MiB, and not the segment's end: \(early)")
        machine.deliver(slot: 0, bytes: 150)
        #expect(machine.quietTick(now: 0.2).contains(.hashAhead(upTo: 300)))
        // The server goes on past its range: what it wrote is thrown away, and what was read of it forgotten.
        #expect(machine.overran(slot: 0) == [.abort(slot: 0), .rewind(to: 0)])

        var confirming = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = confirming.start(now: 0)
        _ = confirming.responseHead(slot: 0, headers: Self.partial(0, 299), now: 0)
        confirming.deliver(slot: 0, bytes: 300)
        let tick = confirming.quietTick(now: 0.2)
        #expect(!tick.contains(.hashAhead(upTo: 300)), "without it, only confirmed bytes are read: \(tick)")
    }

    @Test("Progress counts bytes of the file: an attempt thrown away and fetched again does not count twice")
    func progressAfterDiscard() {
        var machine = Self.machine(ranges: Self.wholeFile, slots: 1)
        _ = machine.start(now: 0)
        _ = machine.responseHead(slot: 0, headers: Self.partial(0, 299), now: 0)
        machine.deliver(slot: 0, bytes: 300)
        _ = machine.overran(slot: 0)
        _ = machine.transferEnded(slot: 0, result: .aborted, now: 1)
        _ = machine.quietTick(now: 2)
        _ = machine.responseHead(slot: 0, headers: Self.partial(0, 299), now: 2)
        machine.deliver(slot: 0, bytes: 300)
        _ = machine.transferEnded(slot: 0, result: .finished, now: 3)
        #expect(machine.progress(now: 3).downloadedBytes == 300)
        #expect(machine.statistics.fetchedBytes == 600, "the network did carry both attempts")
    }

    @Test("A plan already complete with checkpoints saves one final checkpoint, and finishes on its answer")
    func fullyResumedWithCheckpoints() {
        var machine = Self.machine(progress: [100, 100, 100], keepsCheckpoints: true)
        let actions = machine.start(now: 0)
        #expect(
            actions == [
                .confirm(upTo: 300), .createReserve,
                .checkpoint(
                    segments: Self.checkpointed(done: [100, 100, 100], durable: [100, 100, 100]), durable: false),
            ])
        #expect(machine.checkpointSaved().last == .finish(.completed(length: 300)))
    }
}

extension TransferMachine {
    /// Bytes arrive and reach the file in one step, as when the connection writes a large chunk directly.
    mutating func deliver(slot: Int, bytes: Int) {
        bytesReceived(slot: slot, count: bytes)
        bytesWritten(slot: slot, count: bytes)
    }

    /// A response head arriving `now` seconds into the test: the wall clock then reads
    /// `TransferMachineTests.wallClock + now`.
    mutating func responseHead(slot: Int, headers: ResponseHeaders, now: Double) -> [Action] {
        responseHead(slot: slot, headers: headers, now: now, wallClock: TransferMachineTests.wallClock + now)
    }

    var isRunning: Bool {
        if case .running = state { return true }
        return false
    }

    /// A tick without its progress report, for tests of other decisions (progress has tests of its own).
    mutating func quietTick(now: Double) -> [Action] {
        tick(now: now).filter {
            if case .progress = $0 { return false }
            return true
        }
    }
}
