import Testing

@testable import Braid

/// A connection the adaptive count no longer wants stops within a few bytes: the rest of its segment is taken back.
@Suite("SegmentScheduler taking work back")
struct SegmentSchedulerTakeBackTests {
    static let mebibyte: Int64 = 1 << 20

    /// One 8 MiB segment, active on connection 0, 1 MiB of it received.
    static func active() -> SegmentScheduler {
        var scheduler = SegmentScheduler(ranges: [0..<8 * mebibyte], connectionLimit: 2)
        _ = scheduler.assign(connection: 0, now: 0)
        scheduler.received(segment: 0, bytes: mebibyte)
        return scheduler
    }

    @Test("the rest beyond 64 KiB more (aligned) becomes a waiting segment; the plan still covers the file")
    func takesTheRest() {
        var scheduler = Self.active()
        let end = scheduler.takeBack(segment: 0, keeping: 64 << 10)
        #expect(end == Self.mebibyte + (64 << 10))
        #expect(scheduler.segments[0].end == end)
        #expect(scheduler.segments[1].start == end && scheduler.segments[1].end == 8 * Self.mebibyte)
        #expect(scheduler.segments[1].state == .waiting(notBefore: 0))
        #expect(scheduler.order == [0, 1])
        #expect(scheduler.bytesLeft == 7 * Self.mebibyte, "nothing lost, nothing counted twice")
    }

    @Test("nothing is taken back from a pinned segment, or when less than a steal's worth is left")
    func keepsWhatIsNotWorthIt() {
        var pinned = Self.active()
        pinned.pin(segment: 0)
        #expect(pinned.takeBack(segment: 0, keeping: 64 << 10) == nil)
        var nearlyDone = Self.active()
        nearlyDone.received(segment: 0, bytes: 6 * Self.mebibyte + (512 << 10))
        #expect(nearlyDone.takeBack(segment: 0, keeping: 64 << 10) == nil, "under 1 MiB would be left")
        #expect(nearlyDone.segments[0].end == 8 * Self.mebibyte)
    }
}
