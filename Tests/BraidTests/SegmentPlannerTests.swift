import Testing

@testable import Braid

/// The plan is checked as properties over a grid of lengths and connection counts rather than as fixed tables:
/// whatever the inputs, the segments tile the file exactly and respect the size bounds.
@Suite("SegmentPlanner")
struct SegmentPlannerTests {
    static let mebibyte: Int64 = 1 << 20
    static let gibibyte: Int64 = 1 << 30

    /// Lengths around every boundary the planner has: tiny files, the 4 KiB alignment, the 1 MiB minimum, the
    /// 64 MiB maximum, 32-bit overflow and a large file.
    static let lengths: [Int64] = [
        1, 2, 4095, 4096, 4097, 65_536,
        mebibyte - 1, mebibyte, mebibyte + 1,
        2 * mebibyte - 1, 2 * mebibyte, 2 * mebibyte + 1, 2 * mebibyte + 4095,
        3 * mebibyte + 12_345, 7 * mebibyte + 1, 33 * mebibyte - 7,
        64 * mebibyte - 1, 64 * mebibyte, 64 * mebibyte + 1,
        128 * mebibyte - 2, 100 * mebibyte + 3, 320 * mebibyte - 1, 320 * mebibyte + 1, 512 * mebibyte - 2,
        4 * gibibyte - 1, 4 * gibibyte, 4 * gibibyte + 1,
        10 * gibibyte + 3,
    ]
    static let connectionCounts = [1, 2, 3, 4, 8, 16, 64]

    /// The segments tile `0..<length` exactly, and none is below 1 MiB unless the whole file is.
    static func checkTiling(_ plan: [Range<Int64>], length: Int64, connections: Int) {
        let context = "length \(length), \(connections) connections"
        guard let first = plan.first, let last = plan.last else {
            Issue.record("an empty plan for \(context)")
            return
        }
        #expect(first.lowerBound == 0, "plan starts at 0 for \(context)")
        #expect(last.upperBound == length, "plan ends at the length for \(context)")
        for (before, after) in zip(plan, plan.dropFirst()) where before.upperBound != after.lowerBound {
            Issue.record("gap or overlap between \(before) and \(after) for \(context)")
        }
        if length < SegmentPlanner.minimumSegment {
            #expect(plan.count == 1, "a file below 1 MiB is one segment for \(context)")
        }
        for segment in plan {
            if segment.isEmpty { Issue.record("empty segment \(segment) for \(context)") }
            if length >= SegmentPlanner.minimumSegment && Int64(segment.count) < SegmentPlanner.minimumSegment {
                Issue.record("segment \(segment) below 1 MiB for \(context)")
            }
        }
    }

    /// No segment is larger than 64 MiB.
    static func checkMaximum(_ plan: [Range<Int64>], length: Int64, connections: Int) {
        for segment in plan where Int64(segment.count) > SegmentPlanner.maximumSegment {
            Issue.record(
                "segment \(segment) is \(segment.count) bytes, above 64 MiB, for length \(length), \(connections) connections"
            )
        }
    }

    @Test("An empty file has no segments", arguments: [1, 8, 64])
    func emptyFile(connections: Int) {
        #expect(SegmentPlanner.plan(length: 0, connections: connections).isEmpty)
    }

    @Test("A file below 1 MiB is a single segment", arguments: [1, 4095, 4096, 1_048_575] as [Int64])
    func smallFile(length: Int64) {
        #expect(SegmentPlanner.plan(length: length, connections: 16) == [0..<length])
    }

    @Test(
        "Segments are contiguous, cover the file exactly and are at least 1 MiB unless the file is smaller",
        arguments: lengths, connectionCounts
    )
    func tiling(length: Int64, connections: Int) {
        let plan = SegmentPlanner.plan(length: length, connections: connections)
        Self.checkTiling(plan, length: length, connections: connections)
    }

    @Test(
        "No segment exceeds 64 MiB",
        arguments: lengths, connectionCounts
    )
    func maximum(length: Int64, connections: Int) {
        let plan = SegmentPlanner.plan(length: length, connections: connections)
        Self.checkMaximum(plan, length: length, connections: connections)
    }

    @Test("Tiling holds for a few thousand seeded random lengths and connection counts")
    func randomTiling() {
        var generator = SeededGenerator(seed: 0x5E6)
        for _ in 0..<3000 {
            let length = Int64.random(
                in: 1...(Int64(1) << Int.random(in: 1...36, using: &generator)), using: &generator)
            let connections = Int.random(in: 1...64, using: &generator)
            let plan = SegmentPlanner.plan(length: length, connections: connections)
            Self.checkTiling(plan, length: length, connections: connections)
        }
    }

    @Test("Inner boundaries are aligned to 4 KiB")
    func alignment() {
        for length in Self.lengths {
            for segment in SegmentPlanner.plan(length: length, connections: 8).dropFirst() {
                #expect(segment.lowerBound % 4096 == 0, "\(segment) for length \(length)")
            }
        }
    }

    @Test(
        "A large enough file gets several pieces per connection, so the in-order prefix advances steadily",
        arguments: [1, 4, 8, 16]
    )
    func piecesPerConnection(connections: Int) {
        let plan = SegmentPlanner.plan(length: 1 * Self.gibibyte, connections: connections)
        #expect(plan.count >= 4 * connections)
    }

    @Test("64 connections on 10 GiB + 3 bytes: every segment within bounds and the last byte covered")
    func manyConnectionsLargeFile() {
        let length = 10 * Self.gibibyte + 3
        let plan = SegmentPlanner.plan(length: length, connections: 64)
        Self.checkTiling(plan, length: length, connections: 64)
        Self.checkMaximum(plan, length: length, connections: 64)
        #expect(plan.last?.upperBound == length)
    }

    @Test("Pieces ramp up from 1 MiB at the start and taper down to 1 MiB at the end", arguments: [4, 16, 64])
    func rampAndTaper(connections: Int) {
        let length = 10 * Self.gibibyte + 3
        let plan = SegmentPlanner.plan(length: length, connections: connections)
        let sizes = plan.map { Int64($0.count) }
        #expect(sizes.prefix(connections).allSatisfy { $0 == SegmentPlanner.minimumSegment })
        #expect(
            sizes.suffix(connections).allSatisfy {
                $0 - SegmentPlanner.minimumSegment < 4096 && $0 >= SegmentPlanner.minimumSegment
            })
        #expect(sizes.max()! > 4 * SegmentPlanner.minimumSegment, "the middle uses full-size pieces")
        #expect(sizes[connections] == 2 * SegmentPlanner.minimumSegment, "the second round doubles")
        #expect(sizes[sizes.count - connections - 1] == 2 * SegmentPlanner.minimumSegment, "mirrored at the end")
    }

    @Test("One piece per connection is an even split with no ramp")
    func onePiecePerConnection() {
        let plan = SegmentPlanner.plan(length: 1 * Self.gibibyte, connections: 16, piecesPerConnection: 1)
        #expect(plan.count == 16)
        #expect(Set(plan.map(\.count)).count == 1)
    }

    @Test("A nonsensical connection count plans as if for one connection", arguments: [0, -3])
    func nonsenseConnections(connections: Int) {
        #expect(
            SegmentPlanner.plan(length: 100 * Self.mebibyte, connections: connections)
                == SegmentPlanner.plan(length: 100 * Self.mebibyte, connections: 1)
        )
    }
}
