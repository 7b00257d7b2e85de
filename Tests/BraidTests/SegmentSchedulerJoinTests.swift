import Testing

@testable import Braid

/// Costly requests: the scheduler joins waiting segments into one request, up to a size.
@Suite("SegmentScheduler joining pieces")
struct SegmentSchedulerJoinTests {
    @Test("waiting segments after the one assigned are joined up to the piece size; the plan keeps covering the file")
    func joins() {
        var scheduler = SegmentSchedulerTests.threeSegments(progress: [40, 0, 0], connectionLimit: 1)
        let index = scheduler.assign(connection: 0, now: 0, pieceBytes: 170)
        #expect(index == 0)
        #expect(scheduler.segments[0].start == 0 && scheduler.segments[0].end == 200, "60 left + 100 joined")
        #expect(scheduler.order == [0, 2])
        #expect(scheduler.manifestSegments.map { $0.start..<$0.end } == [0..<200, 200..<300])
        #expect(scheduler.segments[1].length == 0 && scheduler.segments[1].state == .complete)
    }

    @Test("a join leaves every connection that may still start its share of what waits")
    func leavesShares() {
        var scheduler = SegmentSchedulerTests.threeSegments(connectionLimit: 2)
        #expect(scheduler.assign(connection: 0, now: 0, pieceBytes: 1000) == 0)
        #expect(scheduler.segments[0].end == 100, "300 waiting, shared by 2 connections: 150 each, no join")
        #expect(scheduler.assign(connection: 1, now: 0, pieceBytes: 1000) == 1)
        #expect(scheduler.segments[1].end == 300, "the last connection may take all that waits")
    }

    @Test("a segment with bytes of its own, or one waiting out a retry, is never joined")
    func keepsTouchedSegments() {
        var scheduler = SegmentSchedulerTests.threeSegments(progress: [0, 10, 0])
        #expect(scheduler.assign(connection: 0, now: 0, pieceBytes: 1000) == 0)
        #expect(scheduler.segments[0].end == 100)
        #expect(scheduler.order == [0, 1, 2])
        var waiting = SegmentSchedulerTests.threeSegments()
        _ = waiting.assign(connection: 0, now: 0)
        _ = waiting.assign(connection: 1, now: 0)
        waiting.flushed(segment: 0, bytes: 50)
        _ = waiting.ended(segment: 0, failure: SegmentSchedulerTests.reset, now: 0, random: 0)
        _ = waiting.ended(segment: 1, failure: SegmentSchedulerTests.reset, now: 10, random: 0)
        guard case let .waiting(due) = waiting.segments[0].state else {
            Issue.record("segment 0 should wait for its retry")
            return
        }
        #expect(waiting.assign(connection: 0, now: due, pieceBytes: 1000) == 0)
        #expect(waiting.segments[0].end == 100, "segment 1 is not due yet")
        #expect(waiting.order == [0, 1, 2])
    }
}

extension SegmentSchedulerJoinTests {
    @Test("with costly requests, nothing smaller than a tenth of a piece is stolen")
    func stealsOnlyWorthwhileShares() {
        var scheduler = SegmentScheduler(ranges: [0..<1000], connectionLimit: 2, minimumSteal: 10)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        #expect(scheduler.assign(connection: 1, now: 0, pieceBytes: 5010) == nil, "half of 1000 is under 5010 / 10")
        let stolen = scheduler.assign(connection: 1, now: 0, pieceBytes: 5000)
        #expect(stolen.map { scheduler.segments[$0].start } == 500, "half of 1000 is 500, a tenth of 5000")
    }
}

extension SegmentSchedulerJoinTests {
    @Test("among a count still growing, each piece is its share of all that is left, plan pieces joined and cut")
    func sharesAmongAGrowingCount() {
        // 60 MiB planned as three 20 MiB pieces; 2 connections now, 8 to come: 7.5 MiB each.
        let mebibyte: Int64 = 1 << 20
        var scheduler = SegmentScheduler(
            ranges: [0..<20 * mebibyte, 20 * mebibyte..<40 * mebibyte, 40 * mebibyte..<60 * mebibyte],
            connectionLimit: 2)
        #expect(
            scheduler.assign(connection: 0, now: 0, pieceBytes: .max, stealsAtLeast: mebibyte, sharingAmong: 8) == 0)
        #expect(scheduler.segments[0].end == 7_864_320, "7.5 MiB, the rest of the piece waiting on its own")
        let second = scheduler.assign(
            connection: 1, now: 0, pieceBytes: .max, stealsAtLeast: mebibyte, sharingAmong: 8)
        #expect(second.map { scheduler.segments[$0].start..<scheduler.segments[$0].end } == 7_864_320..<15_728_640)
        #expect(scheduler.manifestSegments.map(\.end).last == 60 * mebibyte, "the plan still covers the file")
    }

    @Test("the smallest steal can be set apart from the piece size: a share cut small still costs a first byte")
    func stealsAtLeast() {
        var scheduler = SegmentScheduler(ranges: [0..<1000], connectionLimit: 2, minimumSteal: 10)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        #expect(scheduler.assign(connection: 1, now: 0, pieceBytes: 100, stealsAtLeast: 600) == nil)
        #expect(scheduler.assign(connection: 1, now: 0, pieceBytes: 100, stealsAtLeast: 500) != nil)
    }
}
