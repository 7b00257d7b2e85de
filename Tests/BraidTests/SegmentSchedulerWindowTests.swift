import Testing

@testable import Braid

/// A streamed download's window, event by event: no request reaches past the reader's position plus the window, a
/// segment that would is cut at the window's end, and a window too small for a grain of the next segment starts
/// nothing until the reader moves on.
@Suite("SegmentScheduler window")
struct SegmentSchedulerWindowTests {
    /// Four segments of 1 MiB, with a window of `size` from byte 0 over `connections` connections.
    static func scheduler(size: Int64, connections: Int = 4) -> SegmentScheduler {
        let mebibyte: Int64 = 1 << 20
        return SegmentScheduler(
            ranges: (0..<4).map { Int64($0) * mebibyte..<Int64($0 + 1) * mebibyte },
            connectionLimit: connections,
            minimumSteal: 1 << 30,
            window: SegmentScheduler.Window(size: size, from: 0, connections: connections)
        )
    }

    @Test("The grain is an eighth of a connection's share of the window, at least 256 KiB and at most the window")
    func grain() {
        #expect(SegmentScheduler.Window(size: 256 << 20, from: 0, connections: 8).grain == 4 << 20)
        #expect(SegmentScheduler.Window(size: 8 << 20, from: 0, connections: 8).grain == 256 << 10)
        #expect(SegmentScheduler.Window(size: 100 << 10, from: 0, connections: 8).grain == 100 << 10)
        #expect(SegmentScheduler.Window(size: 4 << 20, from: 5, connections: 1).end == (4 << 20) + 5)
    }

    @Test("Segments inside the window are handed out; the one that reaches past it is cut at its end")
    func cutsAtWindowEnd() {
        // 2.5 MiB: segments 0 and 1 fit, segment 2 is cut at 2.5 MiB (a 64 KiB boundary).
        var scheduler = Self.scheduler(size: 5 << 19)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        #expect(scheduler.assign(connection: 1, now: 0) == 1)
        #expect(scheduler.assign(connection: 2, now: 0) == 2)
        #expect(scheduler.segments[2].end == 5 << 19)
        #expect(scheduler.segments[4].start == 5 << 19 && scheduler.segments[4].end == 3 << 20)
        #expect(scheduler.segments[4].state == .waiting(notBefore: 0))
        #expect(scheduler.order == [0, 1, 2, 4, 3], "the rest stays in file order")
        #expect(!scheduler.hasWork(now: 0), "nothing past the window starts, though a connection is free")
        #expect(scheduler.assign(connection: 3, now: 0) == nil)
    }

    @Test("Less than a grain left in the window starts nothing; the reader moving on starts the rest")
    func waitsForGrain() {
        // 1.1 MiB over one connection: the grain is 256 KiB, and 0.1 MiB of segment 1 is less.
        var scheduler = Self.scheduler(size: (1 << 20) + (100 << 10), connections: 1)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        scheduler.deliver(segment: 0, bytes: 1 << 20)
        #expect(scheduler.ended(segment: 0, failure: nil, now: 1, random: 0) == .completed)
        #expect(!scheduler.hasWork(now: 1), "100 KiB of segment 1 is less than a grain")

        scheduler.moveWindow(to: 1 << 20)
        #expect(scheduler.window?.end == (2 << 20) + (100 << 10))
        #expect(scheduler.assign(connection: 0, now: 1) == 1)
        #expect(scheduler.segments[1].end == 2 << 20, "segment 1 now fits whole")
    }

    @Test("The window never moves back")
    func neverMovesBack() {
        var scheduler = Self.scheduler(size: 1 << 20)
        scheduler.moveWindow(to: 2 << 20)
        scheduler.moveWindow(to: 1 << 20)
        #expect(scheduler.window?.end == 3 << 20)
    }

    @Test("Joined requests stop at the window")
    func joinStopsAtWindow() {
        var scheduler = Self.scheduler(size: 2 << 20, connections: 1)
        #expect(scheduler.assign(connection: 0, now: 0, pieceBytes: 4 << 20) == 0)
        #expect(scheduler.segments[0].end == 2 << 20, "segment 1 is joined, segment 2 is past the window")
    }

    @Test("Without a window, the whole plan is handed out")
    func noWindow() {
        var scheduler = SegmentScheduler(ranges: [0..<100, 100..<200], connectionLimit: 2, minimumSteal: 1000)
        #expect(scheduler.assign(connection: 0, now: 0) == 0)
        #expect(scheduler.assign(connection: 1, now: 0) == 1)
        scheduler.moveWindow(to: 50)
        #expect(scheduler.window == nil)
    }
}
