import Testing

@testable import Braid

/// With cache peers the plan is cut at slice boundaries, and a whole-file mismatch refetches what no origin sent.
@Suite("Cache peer plans")
struct CachePeerPlanTests {
    @Test("A plan is cut at every slice boundary, each range's progress and verified marks split as prefixes")
    func cutAtSlices() {
        let cut = SegmentPlanner.cut(
            [0..<150, 150..<400], progress: [120, 30], verified: [50, 0], every: 100)
        #expect(cut.ranges == [0..<100, 100..<150, 150..<200, 200..<300, 300..<400])
        #expect(cut.progress == [100, 20, 30, 0, 0])
        #expect(cut.verified == [50, 0, 0, 0, 0])
    }

    @Test("A fresh plan stays without progress; boundaries already on slices add nothing")
    func cutFreshPlan() {
        let cut = SegmentPlanner.cut([0..<100, 100..<200, 200..<250], progress: [], verified: nil, every: 100)
        #expect(cut.ranges == [0..<100, 100..<200, 200..<250])
        #expect(cut.progress.isEmpty)
        #expect(cut.verified == nil)
    }

    @Test("A plan with nothing done becomes one segment per slice, not the origin's ramp of small first segments")
    func freshPlanIsOneSegmentPerSlice() throws {
        let ramp = SegmentPlanner.plan(length: 64 << 20, connections: 16)
        let inFirstSlice = ramp.filter { range in range.upperBound <= 16 << 20 }.count
        #expect(inFirstSlice >= 16, "the origin's plan puts every connection in the first slice")
        let plan = DownloadJob.TransferPlan(
            ranges: ramp, progress: Array(repeating: 0, count: ramp.count), segmented: true, digest: nil,
            verified: Array(repeating: 0, count: ramp.count))
        let sliced = try #require(DownloadJob.sliced(plan, every: 16 << 20))
        let slices: [Range<Int64>] = [
            0..<(16 << 20), (16 << 20)..<(32 << 20), (32 << 20)..<(48 << 20), (48 << 20)..<(64 << 20),
        ]
        #expect(sliced.ranges == slices)
        #expect(sliced.progress == [0, 0, 0, 0])
        #expect(sliced.verified == [0, 0, 0, 0])

        var resumed = plan
        resumed.progress[0] = 4096
        let cut = try #require(DownloadJob.sliced(resumed, every: 16 << 20))
        #expect(cut.ranges.count >= ramp.count, "a resumed plan keeps its segments")
        let withinSlices = cut.ranges.allSatisfy { range in range.lowerBound >> 24 == (range.upperBound - 1) >> 24 }
        #expect(withinSlices, "cut at the slices")
        #expect(cut.progress.reduce(0, +) == 4096)
    }

    @Test("With piece hashes, a peer's unit holds whole slices and whole pieces; none past 4 GiB")
    func sliceUnit() {
        #expect(DownloadJob.sliceUnit(16 << 20, pieceLength: nil) == 16 << 20)
        #expect(DownloadJob.sliceUnit(16 << 20, pieceLength: 1 << 20) == 16 << 20)
        #expect(DownloadJob.sliceUnit(16 << 20, pieceLength: 64 << 20) == 64 << 20)
        #expect(DownloadJob.sliceUnit(3 << 20, pieceLength: 2 << 20) == 6 << 20)
        #expect(DownloadJob.sliceUnit(4 << 30, pieceLength: (4 << 30) - 1) == nil)
    }

    @Test("What no origin sent is the file less the ranges the origin wrote, in order")
    func complement() {
        #expect(DownloadJob.complement(of: [], in: 0..<100) == [0..<100])
        #expect(DownloadJob.complement(of: [20..<40, 0..<10, 35..<50], in: 0..<100) == [10..<20, 50..<100])
        #expect(DownloadJob.complement(of: [0..<100], in: 0..<100) == [])
    }
}
