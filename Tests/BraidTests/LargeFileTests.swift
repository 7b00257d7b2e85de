import Foundation
import SystemPackage
import Testing

@testable import Braid

/// Files of many TiB plan, checkpoint and resume within the manifest's bounds: Braid never writes a manifest it
/// would refuse to read back.
@Suite("Large files")
struct LargeFileTests {
    static let tebibyte: Int64 = 1 << 40

    @Test(
        "A plan of any length up to the bound fits a tenth of the manifest's segments and round-trips through it",
        arguments: [4 * tebibyte, 8 * tebibyte, 100 * tebibyte, RemoteResource.maximumLength]
    )
    func planRoundTrips(length: Int64) throws {
        let directory = try ScratchDirectory()
        let store = ManifestStore(path: FilePath(directory.file("huge.bin.braid")))
        for (connections, pieces) in [(1, 1), (8, 4), (1024, 1), (1024, 1024)] {
            let plan = SegmentPlanner.plan(length: length, connections: connections, piecesPerConnection: pieces)
            #expect(plan.count <= Manifest.maximumSegments / 10, "\(length) bytes planned in \(plan.count) segments")
            var scheduler = SegmentScheduler(ranges: plan, connectionLimit: connections)
            let assigned = scheduler.assign(connection: 0, now: 0)
            let first = try #require(assigned)
            scheduler.deliver(segment: first, bytes: 12_345)
            var manifest = ManifestTests.valid
            manifest.length = length
            manifest.segments = scheduler.manifestSegments

            try store.save(manifest, durable: false)
            let loaded = try #require(try store.load())
            #expect(loaded == manifest)
            #expect(loaded.trustedProgress(onBoot: manifest.bootID).reduce(0, +) == 12_345)
        }
    }

    @Test("Steals stop before the segment count reaches the manifest's limit, however many connections ask")
    func stealsStopAtTheLimit() {
        let limit = Manifest.maximumSegments
        // Nearly the limit already (as after many resumes): all complete but the last 8, each worth splitting.
        let size: Int64 = 8 << 20
        let ranges = (0..<Int64(limit - 3)).map { $0 * size..<($0 + 1) * size }
        var progress = ranges.map { Int64($0.count) }
        for index in progress.indices.suffix(8) { progress[index] = 0 }
        var scheduler = SegmentScheduler(ranges: ranges, progress: progress, connectionLimit: 16)

        var connection = 0
        while scheduler.assign(connection: connection, now: 0) != nil {
            connection += 1
        }
        #expect(connection == 8 + 3, "the 8 waiting segments, then 3 steals")
        #expect(scheduler.segments.count == limit, "steals filled the manifest exactly to its limit")
        #expect(!scheduler.hasWork(now: 0))
        // Connections finish and ask again, over and over: no steal may add a segment past the limit.
        while let active = scheduler.segments.indices.first(where: { scheduler.segments[$0].state != .complete }) {
            let segment = scheduler.segments[active]
            scheduler.deliver(segment: active, bytes: segment.length - segment.flushed)
            #expect(scheduler.ended(segment: active, failure: nil, now: 0, random: 0) == .completed)
            _ = scheduler.assign(connection: connection, now: 0)
            connection += 1
            #expect(scheduler.segments.count <= limit)
        }
        #expect(scheduler.isComplete)
        var manifest = ManifestTests.valid
        manifest.length = scheduler.totalLength
        manifest.segments = scheduler.manifestSegments
        #expect(throws: Never.self) { try manifest.validate() }
    }
}
