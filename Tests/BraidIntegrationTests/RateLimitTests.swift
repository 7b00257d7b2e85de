import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Synchronization
import Testing

/// `--limit-rate`, `--max-overall-limit` and their library faces. How closely a limit holds second by second is
/// measured by `Benchmarks/rate_limit.py`, not here: these tests check what cannot flake, that a limit is never
/// beaten and that changing it takes effect while the download runs.
@Suite("Rate limits")
struct RateLimitTests {
    static let content = TestContent(seed: 8080, size: 3 << 20)
    static let small = TestContent(seed: 8081, size: 1 << 20)

    /// The least time `bytes` can take under `rate`: the bucket starts empty and lends at most one 128 KiB chunk
    /// and a twentieth of a second's worth beyond the rate.
    static func floor(bytes: Int, rate: Int) -> Duration {
        .seconds(Double(bytes - (128 << 10) - rate / 20) / Double(rate))
    }

    @Test("--limit-rate holds for all of a download's connections together, which still fetch in parallel")
    func limitRate() async throws {
        let server = TestServer(routes: ["/f": .init(content: Self.content)])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-rate")
        defer { directory.remove() }

        let clock = ContinuousClock()
        let start = clock.now
        let run = try await BraidCLI.run([
            server.url("/f"), "-q", "-n", "4", "--limit-rate", "1M", "-o", directory.appending("f").path,
        ])
        let elapsed = clock.now - start

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: directory.appending("f").path) == nil)
        #expect(elapsed >= Self.floor(bytes: 3 << 20, rate: 1 << 20), "3 MiB at 1 MiB/s took \(elapsed)")
        let ranges = server.requestLog.compactMap(\.range)
        #expect(ranges.count >= 3, "the segments were fetched as ranges: \(ranges)")
    }

    @Test("--max-overall-limit holds for a whole list; limit-rate= gives one entry a lower limit of its own")
    func overallLimit() async throws {
        let server = TestServer(routes: [
            "/a": .init(content: Self.small), "/b": .init(content: Self.small), "/c": .init(content: Self.small),
        ])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-rate")
        defer { directory.remove() }
        let list = directory.appending("list.txt")
        try Data("\(server.url("/a"))\n\(server.url("/b"))\n\(server.url("/c"))\n  limit-rate=256K\n".utf8)
            .write(to: list)

        let clock = ContinuousClock()
        let start = clock.now
        let run = try await BraidCLI.run([
            "-q", "-i", list.path, "-j", "3", "-n", "4", "--max-overall-limit", "1.5M", "-d", directory.url.path,
        ])
        let elapsed = clock.now - start

        #expect(run.status == .exited(0), "\(run.standardError)")
        for name in ["a", "b", "c"] {
            #expect(try Self.small.firstDifference(fromFileAt: directory.appending(name).path) == nil)
        }
        #expect(elapsed >= Self.floor(bytes: 3 << 20, rate: 3 << 19), "3 MiB at 1.5 MiB/s took \(elapsed)")
        #expect(elapsed >= Self.floor(bytes: 1 << 20, rate: 256 << 10), "1 MiB at 256 KiB/s took \(elapsed)")
    }

    @Test("a rate that is not one is a usage error naming the option", arguments: ["fast", "-2M", "1.5Q"])
    func badRate(text: String) async throws {
        let run = try await BraidCLI.run(["http://127.0.0.1:9/f", "--limit-rate=\(text)"])
        #expect(run.status == .exited(2))
        #expect(run.standardError.contains("not a rate"), "\(run.standardError)")
        let overall = try await BraidCLI.run(["http://127.0.0.1:9/f", "--max-overall-limit=\(text)"])
        #expect(overall.status == .exited(2))
    }

    @Test("Download.rateLimit changed while the download runs takes effect at once")
    func liveDownloadLimit() async throws {
        let server = TestServer(routes: ["/f": .init(content: Self.content)])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-rate")
        defer { directory.remove() }
        var options = DownloadOptions()
        options.destination = .file(directory.appending("f").path)
        options.connections = 4
        options.syncOnCompletion = false
        // 3 MiB at 32 KiB/s would take over a minute and a half.
        options.rateLimit = 32 << 10
        let download = Download(url: server.url("/f"), options: options)
        #expect(download.rateLimit == 32 << 10)

        let result = try await Self.run(download) { download.rateLimit = nil }

        #expect(
            result.endedUnlimited(rate: 32 << 10, size: Int64(Self.content.size)),
            "the lifted limit let it finish: \(result)")
        #expect(Self.held(32 << 10, until: result), "the limit held until lifted: \(result)")
        #expect(try Self.content.firstDifference(fromFileAt: directory.appending("f").path) == nil)
        #expect(download.rateLimit == nil)
    }

    @Test("DownloadManager.overallRateLimit changed while downloads run takes effect at once")
    func liveOverallLimit() async throws {
        let server = TestServer(routes: ["/f": .init(content: Self.content)])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-rate")
        defer { directory.remove() }
        let manager = DownloadManager(limits: .init(overallRateLimit: 32 << 10))
        #expect(manager.limits.overallRateLimit == 32 << 10)
        var options = DownloadOptions()
        options.destination = .file(directory.appending("f").path)
        options.syncOnCompletion = false
        let download = manager.makeDownload(url: server.url("/f"), options: options)

        let result = try await Self.run(download) { manager.overallRateLimit = nil }

        #expect(
            result.endedUnlimited(rate: 32 << 10, size: Int64(Self.content.size)),
            "the lifted limit let it finish: \(result)")
        #expect(Self.held(32 << 10, until: result), "the limit held until lifted: \(result)")
        #expect(manager.limits.overallRateLimit == nil)
        #expect(try Self.content.firstDifference(fromFileAt: directory.appending("f").path) == nil)
    }

    /// What `run` saw: how long the whole download took, and how far it was, and after how long, when the limit
    /// changed.
    struct LiveChange: CustomStringConvertible {
        var elapsed: Duration
        var bytesWhenChanged: Int64
        var secondsWhenChanged: Double

        /// How long the download took once the limit changed. Measured from the change, not the start, so that
        /// a test starved of its thread for a while (a busy machine) does not count the wait before the change:
        /// the limit held until then (`held(_:until:)`).
        var secondsAfterChange: Double { elapsed.seconds - secondsWhenChanged }

        /// Whether the rest of a file of `size` bytes came in less than half the time `rate` would have let it
        /// take: the change took effect, however late a busy machine let the test make it (a clean clone's run
        /// once made it some 50 s in, when a fixed 20 s for the rest was too little).
        func endedUnlimited(rate: Int64, size: Int64) -> Bool {
            bytesWhenChanged >= 0 && secondsAfterChange < Double(size - bytesWhenChanged) / Double(rate) / 2
        }

        var description: String {
            "\(bytesWhenChanged) bytes after \(secondsWhenChanged) s, done in \(elapsed)"
        }
    }

    /// Whether a limit of `rate` bytes a second held until it was changed: no more than the rate allowed since the
    /// start (plus a second's slack and the first chunks), however long the test took to get there.
    static func held(_ rate: Int64, until change: LiveChange) -> Bool {
        change.bytesWhenChanged >= 0
            && Double(change.bytesWhenChanged) <= Double(rate) * (change.secondsWhenChanged + 1) + Double(256 << 10)
    }

    /// Runs `download`, calling `change` once it has received its first bytes and some time has passed under the
    /// limit; returns how long the whole download took and how far it was when the limit changed.
    private static func run(
        _ download: Download, change: @escaping @Sendable () -> Void
    ) async throws -> LiveChange {
        let clock = ContinuousClock()
        let start = clock.now
        let changedAt = Mutex<(bytes: Int64, seconds: Double)?>(nil)
        let watcher = Task {
            for await event in download.events {
                guard case let .progress(progress) = event, progress.downloadedBytes > 0 else { continue }
                // Half a second under the limit shows it held; then lift it.
                let since = clock.now - start
                guard since > .milliseconds(500) else { continue }
                let first = changedAt.withLock { changed in
                    defer {
                        if changed == nil { changed = (progress.downloadedBytes, since.seconds) }
                    }
                    return changed == nil
                }
                if first { change() }
            }
        }
        let result = try await download.run()
        await watcher.value
        let changed = changedAt.withLock { $0 }
        // The run's own time, not this task's: on a busy machine the task can resume long after the file is done.
        return LiveChange(
            elapsed: .seconds(result.seconds), bytesWhenChanged: changed?.bytes ?? -1,
            secondsWhenChanged: changed?.seconds ?? 0)
    }
}
