import Testing

@testable import Braid

/// The scheduler is a pure state machine: each test drives it event by event, as the transfer engine would, and
/// checks the action it returns and the state it is left in. Small byte counts keep the arithmetic readable;
/// `minimumSteal` is lowered to match.
@Suite("SegmentScheduler")
struct SegmentSchedulerTests {
    static let reset = FailureKind.transient(.network, "connection reset", retryAfter: nil, refusedConnection: false)
    static let busy = FailureKind.transient(
        .protocolViolation, "the server answered 503 (busy)", retryAfter: nil, refusedConnection: true)
    static let notFound = FailureKind.fatal(.protocolViolation, "the server has no such file (HTTP 404)")

    /// Three segments of 100 bytes: `0..<100`, `100..<200`, `200..<300`.
    static func threeSegments(
        progress: [Int64] = [],
        connectionLimit: Int = 3,
        minimumSteal: Int64 = 10,
        retryPolicy: RetryPolicy = RetryPolicy()
    ) -> SegmentScheduler {
        SegmentScheduler(
            ranges: [0..<100, 100..<200, 200..<300],
            progress: progress,
            connectionLimit: connectionLimit,
            minimumSteal: minimumSteal,
            retryPolicy: retryPolicy
        )
    }

    // MARK: - Handing out work

    @Test("Waiting segments are handed out in file order, one per connection, up to the connection limit")
    func assignsInFileOrder() {
        var scheduler = Self.threeSegments(connectionLimit: 2, minimumSteal: 1000)
        #expect(scheduler.hasWork(now: 0))

        #expect(scheduler.assign(connection: 7, now: 0) == 0)
        #expect(scheduler.segments[0].state == .active(connection: 7))
        #expect(scheduler.assign(connection: 8, now: 0) == 1)
        #expect(scheduler.segments[1].state == .active(connection: 8))
        #expect(scheduler.activeCount == 2)

        #expect(!scheduler.hasWork(now: 0))
        #expect(scheduler.assign(connection: 9, now: 0) == nil)
        #expect(scheduler.segments[2].state == .waiting(notBefore: 0))
    }

    @Test("A segment whose bytes are all flushed completes and frees its connection for the next one")
    func completesAndHandsOutNext() {
        var scheduler = Self.threeSegments(connectionLimit: 1, minimumSteal: 1000)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        scheduler.deliver(segment: 0, bytes: 100)

        #expect(scheduler.ended(segment: 0, failure: nil, now: 1, random: 0) == .completed)
        #expect(scheduler.segments[0].state == .complete)
        #expect(scheduler.activeCount == 0)
        #expect(scheduler.assign(connection: 0, now: 1) == 1)
    }

    @Test("A transfer that reports a failure after flushing every byte still completes")
    func failureAfterLastByteCompletes() {
        var scheduler = Self.threeSegments()
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        scheduler.deliver(segment: 0, bytes: 100)
        #expect(scheduler.ended(segment: 0, failure: Self.reset, now: 1, random: 0) == .completed)
    }

    @Test("Completion is reached only when every segment is complete and no connection is active")
    func isComplete() {
        var scheduler = Self.threeSegments(minimumSteal: 1000)
        for connection in 0..<3 { #expect(scheduler.assign(connection: connection, now: 0) == connection) }
        for index in 0..<3 {
            #expect(!scheduler.isComplete)
            scheduler.deliver(segment: index, bytes: 100)
        }
        #expect(!scheduler.isComplete, "all bytes are flushed but three transfers are still open")
        for index in 0..<3 {
            #expect(!scheduler.isComplete)
            #expect(scheduler.ended(segment: index, failure: nil, now: 0, random: 0) == .completed)
        }
        #expect(scheduler.isComplete)
        #expect(scheduler.flushedBytes == 300)
        #expect(!scheduler.hasWork(now: 0))
        #expect(scheduler.assign(connection: 0, now: 0) == nil)
    }

    @Test("An empty plan is complete at once")
    func emptyPlan() {
        var scheduler = SegmentScheduler(ranges: [], connectionLimit: 4)
        #expect(scheduler.isComplete)
        #expect(scheduler.confirmedPrefix == 0)
        #expect(scheduler.totalLength == 0)
        #expect(scheduler.assign(connection: 0, now: 0) == nil)
    }

    // MARK: - The in-order prefix

    @Test("The confirmed prefix grows as attempts end, from byte 0, and ignores bytes beyond a gap")
    func confirmedPrefix() {
        var scheduler = Self.threeSegments(minimumSteal: 1000)
        for connection in 0..<3 { _ = scheduler.assign(connection: connection, now: 0) }
        #expect(scheduler.confirmedPrefix == 0)

        scheduler.deliver(segment: 0, bytes: 40)
        #expect(scheduler.confirmedPrefix == 0, "the bytes of a running attempt are not vouched for yet")
        #expect(scheduler.ended(segment: 0, failure: Self.reset, now: 0, random: 0) == .retry(delay: 0.125))
        #expect(scheduler.confirmedPrefix == 40, "an attempt that broke off keeps the bytes it wrote")

        scheduler.deliver(segment: 1, bytes: 100)
        #expect(scheduler.ended(segment: 1, failure: nil, now: 0, random: 0) == .completed)
        scheduler.deliver(segment: 2, bytes: 50)
        #expect(scheduler.confirmedPrefix == 40, "segment 0 is still a gap")

        #expect(scheduler.assign(connection: 0, now: 1) == 0)
        scheduler.received(segment: 0, bytes: 60)
        scheduler.flushed(segment: 0, bytes: 60)
        #expect(scheduler.confirmedPrefix == 40, "written, but the response has not ended")
        #expect(scheduler.ended(segment: 0, failure: nil, now: 1, random: 0) == .completed)
        #expect(scheduler.confirmedPrefix == 200, "segments 0 and 1 complete; segment 2 is still running")

        scheduler.deliver(segment: 2, bytes: 50)
        #expect(scheduler.ended(segment: 2, failure: nil, now: 1, random: 0) == .completed)
        #expect(scheduler.confirmedPrefix == 300)
        #expect(scheduler.confirmedPrefix == scheduler.totalLength)
    }

    @Test("A discarded attempt never reaches the prefix, so what rewrites its bytes is what gets verified")
    func discardedAttemptNeverConfirmed() {
        var scheduler = Self.threeSegments(connectionLimit: 1)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        scheduler.deliver(segment: 0, bytes: 100)
        #expect(scheduler.confirmedPrefix == 0)
        scheduler.discardAttempt(segment: 0)
        let action = scheduler.ended(segment: 0, failure: Self.reset, now: 0, random: 0)
        #expect(action == .retry(delay: 0.125))
        #expect(scheduler.confirmedPrefix == 0, "the right-looking bytes of the thrown-away response stay unread")

        #expect(scheduler.assign(connection: 0, now: 1) == 0)
        #expect(scheduler.segments[0].start + scheduler.segments[0].flushed == 0, "the retry starts over")
        scheduler.deliver(segment: 0, bytes: 100)
        #expect(scheduler.ended(segment: 0, failure: nil, now: 1, random: 0) == .completed)
        #expect(scheduler.confirmedPrefix == 100)
    }

    // MARK: - Work stealing

    @Test("With nothing waiting, an idle connection takes the second half of the largest remaining range")
    func stealsFromLargestRemaining() {
        var scheduler = SegmentScheduler(ranges: [0..<100, 100..<300], connectionLimit: 3, minimumSteal: 10)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        #expect(scheduler.assign(connection: 1, now: 0) == 1)
        scheduler.deliver(segment: 0, bytes: 20)
        scheduler.deliver(segment: 1, bytes: 50)

        #expect(scheduler.hasWork(now: 0))
        let stolen = scheduler.assign(connection: 2, now: 0)
        #expect(stolen == 2)
        #expect(scheduler.segments[1].end == 225, "150 remaining from 150: split in the middle")
        #expect(scheduler.segments[1].state == .active(connection: 1))
        #expect(scheduler.segments[2].start == 225)
        #expect(scheduler.segments[2].end == 300)
        #expect(scheduler.segments[2].flushed == 0)
        #expect(scheduler.segments[2].state == .active(connection: 2))
        #expect(scheduler.order == [0, 1, 2])
        #expect(scheduler.activeCount == 3)
        #expect(scheduler.totalLength == 300)
    }

    @Test("A stolen range is inserted after its victim in file order, so the prefix stays in order")
    func stolenRangeKeepsFileOrder() {
        var scheduler = Self.threeSegments(connectionLimit: 4, minimumSteal: 10)
        for connection in 0..<3 { _ = scheduler.assign(connection: connection, now: 0) }
        scheduler.deliver(segment: 0, bytes: 90)
        scheduler.deliver(segment: 1, bytes: 10)
        scheduler.deliver(segment: 2, bytes: 60)

        #expect(scheduler.assign(connection: 3, now: 0) == 3)
        #expect(scheduler.segments[1].end == 155, "segment 1 has the most left, 90 bytes from 110: split at 155")
        #expect(scheduler.segments[3].start == 155)
        #expect(scheduler.segments[3].end == 200)
        #expect(scheduler.order == [0, 1, 3, 2])

        scheduler.deliver(segment: 0, bytes: 10)
        scheduler.deliver(segment: 1, bytes: 45)
        #expect(scheduler.ended(segment: 1, failure: nil, now: 0, random: 0) == .completed)
        #expect(scheduler.ended(segment: 0, failure: nil, now: 0, random: 0) == .completed)
        #expect(scheduler.confirmedPrefix == 155)
        scheduler.deliver(segment: 3, bytes: 45)
        scheduler.deliver(segment: 2, bytes: 40)
        #expect(scheduler.ended(segment: 3, failure: nil, now: 0, random: 0) == .completed)
        #expect(scheduler.confirmedPrefix == 200, "the stolen range follows its victim; segment 2 is still running")
        #expect(scheduler.ended(segment: 2, failure: nil, now: 0, random: 0) == .completed)
        #expect(scheduler.confirmedPrefix == 300)
        #expect(scheduler.isComplete)
        #expect(scheduler.flushedBytes == 300)
    }

    @Test(
        "Nothing is stolen unless the largest remaining range is at least twice the minimum steal",
        arguments: [(received: 21 as Int64, steals: false), (received: 20, steals: true)]
    )
    func stealThreshold(received: Int64, steals: Bool) {
        var scheduler = SegmentScheduler(ranges: [0..<100], connectionLimit: 2, minimumSteal: 40)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        scheduler.deliver(segment: 0, bytes: received)
        #expect(scheduler.hasWork(now: 0) == steals)
        #expect((scheduler.assign(connection: 1, now: 0) != nil) == steals)
        #expect(scheduler.segments.count == (steals ? 2 : 1))
    }

    @Test("The split point is aligned up to 64 KiB when that still leaves the victim at least the minimum")
    func stealAlignment() {
        let mebibyte: Int64 = 1 << 20
        var scheduler = SegmentScheduler(ranges: [0..<(8 * mebibyte)], connectionLimit: 2, minimumSteal: mebibyte)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        scheduler.deliver(segment: 0, bytes: 1000)
        #expect(scheduler.assign(connection: 1, now: 0) == 1)
        let split = scheduler.segments[0].end
        #expect(split % (64 << 10) == 0)
        #expect(split == 4 * mebibyte + (64 << 10), "the middle, 4 MiB + 500, rounded up")
        #expect(scheduler.segments[1].start == split)
        #expect(scheduler.segments[1].end == 8 * mebibyte)
    }

    @Test("Stealing never takes back bytes already received, even if not yet flushed")
    func stealStartsAfterReceivedBytes() {
        var scheduler = SegmentScheduler(ranges: [0..<200], connectionLimit: 2, minimumSteal: 10)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        scheduler.received(segment: 0, bytes: 100)
        scheduler.flushed(segment: 0, bytes: 20)
        #expect(scheduler.assign(connection: 1, now: 0) == 1)
        #expect(scheduler.segments[0].end == 150)
        #expect(scheduler.segments[1].start == 150)
    }

    // MARK: - Failures and retries

    @Test("A failed transfer is retried from its last flushed byte once its backoff has passed")
    func retryAfterBackoff() {
        var scheduler = Self.threeSegments(connectionLimit: 1, minimumSteal: 1000)
        #expect(scheduler.assign(connection: 0, now: 10) == 0)
        scheduler.received(segment: 0, bytes: 30)
        scheduler.flushed(segment: 0, bytes: 20)

        #expect(scheduler.ended(segment: 0, failure: Self.reset, now: 10, random: 0) == .retry(delay: 0.125))
        #expect(scheduler.segments[0].state == .waiting(notBefore: 10.125))
        #expect(scheduler.segments[0].received == 20, "the 10 unflushed bytes are fetched again")
        #expect(scheduler.segments[0].failures == 1)
        #expect(scheduler.nextRetryTime == 0, "segment 1 and 2 are due at once")

        #expect(scheduler.assign(connection: 0, now: 10) == 1, "the next segment goes first meanwhile")
        scheduler.deliver(segment: 1, bytes: 100)
        #expect(scheduler.ended(segment: 1, failure: nil, now: 10, random: 0) == .completed)
        #expect(scheduler.assign(connection: 0, now: 10) == 2)
        scheduler.deliver(segment: 2, bytes: 100)
        #expect(scheduler.ended(segment: 2, failure: nil, now: 10, random: 0) == .completed)

        #expect(scheduler.nextRetryTime == 10.125)
        #expect(!scheduler.hasWork(now: 10.1))
        #expect(scheduler.assign(connection: 0, now: 10.1) == nil)
        #expect(scheduler.hasWork(now: 10.125))
        #expect(scheduler.assign(connection: 0, now: 10.125) == 0)
        #expect(scheduler.segments[0].start + scheduler.segments[0].flushed == 20, "resumes at byte 20")
        scheduler.deliver(segment: 0, bytes: 80)
        #expect(scheduler.ended(segment: 0, failure: nil, now: 11, random: 0) == .completed)
        #expect(scheduler.isComplete)
    }

    @Test("Failures without progress back off exponentially and give up after maximumAttempts")
    func givesUpAfterMaximumAttempts() {
        var scheduler = Self.threeSegments(connectionLimit: 1, retryPolicy: RetryPolicy(maximumAttempts: 3))
        var now = 0.0
        for expectedDelay in [0.25, 0.5] {
            #expect(scheduler.assign(connection: 0, now: now) == 0)
            let action = scheduler.ended(segment: 0, failure: Self.reset, now: now, random: 1)
            #expect(action == .retry(delay: expectedDelay))
            now += expectedDelay
        }
        #expect(scheduler.assign(connection: 0, now: now) == 0)
        let action = scheduler.ended(segment: 0, failure: Self.reset, now: now, random: 1)
        guard case let .fail(code, message) = action else {
            Issue.record("expected a failure, got \(action)")
            return
        }
        #expect(code == .network)
        #expect(message.contains("connection reset"))
        #expect(message.contains("3 attempts"))
        #expect(scheduler.segments[0].state == .waiting(notBefore: .infinity))
        #expect(scheduler.assign(connection: 0, now: 1e9) == 1, "the failed segment is never handed out again")
    }

    @Test("An attempt that makes progress resets the count of fruitless attempts")
    func progressResetsFailures() {
        var scheduler = Self.threeSegments(connectionLimit: 1, retryPolicy: RetryPolicy(maximumAttempts: 2))
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        #expect(scheduler.ended(segment: 0, failure: Self.reset, now: 0, random: 0) == .retry(delay: 0.125))
        #expect(scheduler.segments[0].failures == 1)

        #expect(scheduler.assign(connection: 0, now: 1) == 0)
        scheduler.deliver(segment: 0, bytes: 10)
        #expect(scheduler.ended(segment: 0, failure: Self.reset, now: 1, random: 0) == .retry(delay: 0.125))
        #expect(scheduler.segments[0].failures == 1, "progress: the count starts again")

        #expect(scheduler.assign(connection: 0, now: 2) == 0)
        let action = scheduler.ended(segment: 0, failure: Self.reset, now: 2, random: 0)
        guard case .fail(.network, _) = action else {
            Issue.record("expected a network failure, got \(action)")
            return
        }
    }

    @Test("A fatal failure fails the download at once, whatever the attempts left")
    func fatalFailsAtOnce() {
        var scheduler = Self.threeSegments(connectionLimit: 1)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        #expect(
            scheduler.ended(segment: 0, failure: Self.notFound, now: 0, random: 0)
                == .fail(.protocolViolation, "the server has no such file (HTTP 404)")
        )
        #expect(scheduler.activeCount == 0)
        #expect(scheduler.segments[0].state == .waiting(notBefore: .infinity))
    }

    @Test("A response that ends early without an error is retried, and reported as a protocol violation")
    func earlyCleanEnd() {
        var scheduler = Self.threeSegments(connectionLimit: 1, retryPolicy: RetryPolicy(maximumAttempts: 2))
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        scheduler.deliver(segment: 0, bytes: 99)
        #expect(scheduler.ended(segment: 0, failure: nil, now: 0, random: 0) == .retry(delay: 0.125))
        #expect(scheduler.assign(connection: 0, now: 1) == 0)
        let action = scheduler.ended(segment: 0, failure: nil, now: 1, random: 0)
        guard case let .fail(code, message) = action else {
            Issue.record("expected a failure, got \(action)")
            return
        }
        #expect(code == .protocolViolation)
        #expect(message.contains("ended early"))
    }

    @Test("Retry-After replaces the backoff", arguments: [0.0, 7, 300])
    func retryAfterWins(seconds: Double) {
        var scheduler = Self.threeSegments(connectionLimit: 1)
        #expect(scheduler.assign(connection: 0, now: 100) == 0)
        let failure = FailureKind.transient(
            .protocolViolation, "busy", retryAfter: seconds, refusedConnection: false)
        #expect(scheduler.ended(segment: 0, failure: failure, now: 100, random: 0.5) == .retry(delay: seconds))
        #expect(scheduler.segments[0].state == .waiting(notBefore: 100 + seconds))
    }

    @Test("A Retry-After longer than the policy allows fails instead of waiting")
    func retryAfterTooLong() {
        var scheduler = Self.threeSegments(connectionLimit: 1)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        let failure = FailureKind.transient(
            .protocolViolation, "the server answered 503 (busy)", retryAfter: 3600, refusedConnection: true)
        let action = scheduler.ended(segment: 0, failure: failure, now: 0, random: 0)
        guard case let .fail(code, message) = action else {
            Issue.record("expected a failure, got \(action)")
            return
        }
        #expect(code == .protocolViolation)
        #expect(message.contains("3600"))
    }

    // MARK: - Refused connections

    @Test("A connection refused while others are active lowers the limit to the connections still active")
    func refusedConnectionLowersLimit() {
        var scheduler = SegmentScheduler(
            ranges: [0..<100, 100..<200, 200..<300, 300..<400, 400..<500],
            connectionLimit: 4,
            minimumSteal: 1000
        )
        for connection in 0..<4 { #expect(scheduler.assign(connection: connection, now: 0) == connection) }

        #expect(scheduler.ended(segment: 3, failure: Self.busy, now: 0, random: 0) == .retry(delay: 0.125))
        #expect(scheduler.connectionLimit == 3)
        #expect(scheduler.activeCount == 3)
        #expect(!scheduler.hasWork(now: 1))
        #expect(scheduler.assign(connection: 3, now: 1) == nil, "segment 4 waits: only 3 connections allowed")

        scheduler.deliver(segment: 0, bytes: 100)
        #expect(scheduler.ended(segment: 0, failure: nil, now: 1, random: 0) == .completed)
        #expect(scheduler.assign(connection: 0, now: 1) == 3, "the refused segment comes first, in file order")
        #expect(scheduler.connectionLimit == 3)
    }

    @Test("A refusal on the only active connection keeps the limit: the server may just be busy")
    func refusalOnLastConnectionKeepsLimit() {
        var scheduler = Self.threeSegments(connectionLimit: 3, minimumSteal: 1000)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        #expect(scheduler.ended(segment: 0, failure: Self.busy, now: 0, random: 0) == .retry(delay: 0.125))
        #expect(scheduler.connectionLimit == 3)
    }

    @Test("Refusals never take the limit below one connection")
    func limitNeverBelowOne() {
        var scheduler = Self.threeSegments(connectionLimit: 2, minimumSteal: 1000)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        #expect(scheduler.assign(connection: 1, now: 0) == 1)
        _ = scheduler.ended(segment: 1, failure: Self.busy, now: 0, random: 0)
        #expect(scheduler.connectionLimit == 1)
        _ = scheduler.ended(segment: 0, failure: Self.busy, now: 0, random: 0)
        #expect(scheduler.connectionLimit == 1)
        #expect(scheduler.assign(connection: 0, now: 10) == 0)
    }

    // MARK: - Resume

    @Test("On resume, complete segments are skipped and partial ones restart at their flushed mark")
    func resumeFromProgress() {
        var scheduler = Self.threeSegments(progress: [100, 40, 0], minimumSteal: 1000)
        #expect(scheduler.segments.map(\.state) == [.complete, .waiting(notBefore: 0), .waiting(notBefore: 0)])
        #expect(scheduler.flushedBytes == 140)
        #expect(scheduler.confirmedPrefix == 140)
        #expect(!scheduler.isComplete)

        #expect(scheduler.assign(connection: 0, now: 0) == 1)
        #expect(scheduler.segments[1].start + scheduler.segments[1].flushed == 140)
        #expect(scheduler.assign(connection: 1, now: 0) == 2)
        #expect(scheduler.assign(connection: 2, now: 0) == nil)

        scheduler.deliver(segment: 1, bytes: 60)
        #expect(scheduler.ended(segment: 1, failure: nil, now: 0, random: 0) == .completed)
        scheduler.deliver(segment: 2, bytes: 100)
        #expect(scheduler.ended(segment: 2, failure: nil, now: 0, random: 0) == .completed)
        #expect(scheduler.isComplete)
    }

    @Test("A complete segment after a gap is not handed out again, nor counted in the prefix")
    func resumeWithLaterSegmentComplete() {
        var scheduler = Self.threeSegments(progress: [0, 100, 100], minimumSteal: 1000)
        #expect(scheduler.confirmedPrefix == 0)
        #expect(scheduler.flushedBytes == 200)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        #expect(scheduler.assign(connection: 1, now: 0) == nil)
        scheduler.deliver(segment: 0, bytes: 100)
        #expect(scheduler.ended(segment: 0, failure: nil, now: 0, random: 0) == .completed)
        #expect(scheduler.confirmedPrefix == 300)
    }

    @Test("Progress out of range from a manifest is clamped to the segment")
    func resumeClampsProgress() {
        let scheduler = Self.threeSegments(progress: [150, -5, 99])
        #expect(scheduler.segments.map(\.flushed) == [100, 0, 99])
        #expect(scheduler.segments[0].state == .complete)
        #expect(scheduler.segments[1].state == .waiting(notBefore: 0))
    }

    @Test("A fully downloaded file resumes as complete, with nothing to hand out")
    func resumeComplete() {
        var scheduler = Self.threeSegments(progress: [100, 100, 100])
        #expect(scheduler.isComplete)
        #expect(scheduler.confirmedPrefix == 300)
        #expect(scheduler.assign(connection: 0, now: 0) == nil)
    }

    // MARK: - Durability, discarded attempts, unknown length

    @Test("A sync makes durable what was flushed when it started, never more than is flushed")
    func syncedMarksDurable() {
        var scheduler = Self.threeSegments()
        for connection in 0..<2 { _ = scheduler.assign(connection: connection, now: 0) }
        scheduler.deliver(segment: 0, bytes: 50)
        scheduler.deliver(segment: 1, bytes: 10)

        scheduler.synced(flushedAtSyncStart: [40, 80, 0])
        #expect(scheduler.segments.map(\.durable) == [40, 10, 0])
        scheduler.synced(flushedAtSyncStart: [30, 10, 0])
        #expect(scheduler.segments.map(\.durable) == [40, 10, 0], "an older snapshot never lowers the mark")
    }

    @Test("Discarding an attempt forgets its bytes, from the durable mark too; the prefix never had them")
    func discardAttempt() {
        var scheduler = Self.threeSegments(progress: [20, 0, 0], connectionLimit: 1)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        scheduler.deliver(segment: 0, bytes: 80)
        scheduler.synced(flushedAtSyncStart: [100, 0, 0])
        #expect(scheduler.confirmedPrefix == 20)

        scheduler.discardAttempt(segment: 0)
        #expect(scheduler.segments[0].flushed == 20)
        #expect(scheduler.segments[0].received == 20)
        #expect(scheduler.segments[0].durable == 20)
        #expect(scheduler.confirmedPrefix == 20)
        #expect(scheduler.flushedBytes == 20)
    }

    @Test("A stream of unknown length ends where its bytes stop")
    func unknownLength() {
        var scheduler = SegmentScheduler(ranges: [0..<Int64.max], connectionLimit: 1)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        scheduler.deliver(segment: 0, bytes: 12_345)
        #expect(scheduler.confirmedPrefix == 0)
        #expect(!scheduler.isComplete)

        scheduler.endUnknownLength(segment: 0)
        #expect(scheduler.totalLength == 12_345)
        #expect(scheduler.ended(segment: 0, failure: nil, now: 0, random: 0) == .completed)
        #expect(scheduler.isComplete)
        #expect(scheduler.confirmedPrefix == 12_345)
    }

    @Test("Ending a segment that is not active is a programming error")
    func endingInactiveSegmentTraps() async {
        await #expect(processExitsWith: .failure) {
            var scheduler = SegmentScheduler(ranges: [0..<100], connectionLimit: 1)
            _ = scheduler.ended(segment: 0, failure: nil, now: 0, random: 0)
        }
    }

    // MARK: - A whole transfer, simulated

    @Test(
        "A simulated transfer with random chunks, failures and steals flushes every byte exactly once", arguments: 1...8
    )
    func simulatedTransfer(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let mebibyte: Int64 = 1 << 20
        let length = Int64.random(in: 1...(200 * mebibyte), using: &random)
        let connections = Int.random(in: 1...8, using: &random)
        var scheduler = SegmentScheduler(
            ranges: SegmentPlanner.plan(length: length, connections: connections),
            connectionLimit: connections,
            minimumSteal: mebibyte,
            retryPolicy: RetryPolicy(maximumAttempts: 1000)
        )
        var now = 0.0
        var busy: [Int: Int] = [:]
        var prefix: Int64 = 0
        var steps = 0
        while !scheduler.isComplete && steps < 100_000 {
            steps += 1
            for connection in 0..<connections where busy[connection] == nil {
                if let index = scheduler.assign(connection: connection, now: now) { busy[connection] = index }
            }
            guard let connection = busy.keys.sorted().randomElement(using: &random), let index = busy[connection]
            else {
                guard let next = scheduler.nextRetryTime else {
                    Issue.record("nothing active, nothing waiting, yet not complete")
                    return
                }
                now = next
                continue
            }
            let remaining = scheduler.segments[index].remaining
            switch Int.random(in: 0..<40, using: &random) {
            case 0..<4:
                let action = scheduler.ended(segment: index, failure: Self.reset, now: now, random: 0.5)
                if case .retry = action {} else { Issue.record("a transient failure gave \(action)") }
                busy[connection] = nil
            case 4:
                let action = scheduler.ended(segment: index, failure: Self.busy, now: now, random: 0.5)
                if case .retry = action {} else { Issue.record("a refusal gave \(action)") }
                busy[connection] = nil
            default:
                let chunk = min(remaining, Int64.random(in: 1...(3 * mebibyte), using: &random))
                scheduler.deliver(segment: index, bytes: chunk)
                if scheduler.segments[index].remaining == 0 {
                    #expect(scheduler.ended(segment: index, failure: nil, now: now, random: 0) == .completed)
                    busy[connection] = nil
                }
            }
            now += 0.01
            #expect(scheduler.confirmedPrefix >= prefix, "the prefix never moves back")
            prefix = scheduler.confirmedPrefix
            #expect(scheduler.activeCount == busy.count)
        }
        #expect(scheduler.isComplete)
        #expect(scheduler.flushedBytes == length)
        #expect(scheduler.confirmedPrefix == length)
        let tiles = scheduler.order.map { scheduler.segments[$0].start..<scheduler.segments[$0].end }
        #expect(tiles.first?.lowerBound == 0)
        #expect(tiles.last?.upperBound == length)
        #expect(zip(tiles, tiles.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
        #expect(scheduler.segments.allSatisfy { $0.state == .complete && $0.flushed == $0.length })
    }
}

extension SegmentScheduler {
    /// Bytes arrive and reach the file in one step, as they do when the engine's buffer is flushed at once.
    mutating func deliver(segment index: Int, bytes: Int64) {
        received(segment: index, bytes: bytes)
        flushed(segment: index, bytes: bytes)
    }
}
