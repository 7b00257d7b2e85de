import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Synchronization
import Testing

/// The public API as an embedding app uses it: pause and resume without `run()` returning, cancel keeping or
/// removing the partial file, and a manager whose downloads share connection caps.
@Suite("library API")
struct LibraryAPITests {
    static let content = TestContent(seed: 41, size: 8 << 20)
    /// How long a wait for the first bytes or a state may take. Long: when a full run starts, every test starts
    /// at once on this 2-core machine, and a test's task may not run again for tens of seconds.
    static let patience = Duration.seconds(90)

    /// 512 KiB/s per connection. With `holding`, the first run cannot finish on its own, however late the test gets to
    /// act: the responses to its first requests (one GET per connection, the first of them the probe) send 256 KiB each
    /// and then hold, until the client pauses or cancels; requests after those are served in full. On a loaded machine
    /// the first tens of seconds of a full run can pass before a test's task runs again, long enough for a throttled
    /// download to complete before it could be paused.
    static func server(rate: Int = 512 << 10, holding: Bool = false) throws -> TestServer {
        var faults: [TestServer.Fault] = [.throttle(bytesPerSecond: rate)]
        if holding { faults.append(.onlyFirst(requests: 4, .stall(afterBytes: 256 << 10))) }
        let server = TestServer(routes: ["/f": .init(content: content, faults: faults)])
        try server.start()
        return server
    }

    static func options(_ directory: TemporaryDirectory, name: String = "out.bin") -> DownloadOptions {
        var options = DownloadOptions()
        options.destination = .file(directory.appending(name).path)
        options.connections = 4
        options.syncOnCompletion = false
        // A held response is not a stalled one to give up on: only the test's pause or cancel ends it.
        options.stallTimeoutSeconds = 600
        return options
    }

    /// Records a download's states and whether bytes have arrived.
    final class Observer: Sendable {
        let states = Mutex<[DownloadState]>([])
        let downloaded = Mutex<Int64>(0)

        func watch(_ download: Download) -> Task<Void, Never> {
            Task {
                for await event in download.events {
                    switch event {
                    case let .state(state): states.withLock { $0.append(state) }
                    case let .progress(progress): downloaded.withLock { $0 = progress.downloadedBytes }
                    default: break
                    }
                }
            }
        }
    }

    /// Starts a download of the server's file, watched by an observer, running in a task.
    static func start(
        _ server: TestServer,
        into directory: TemporaryDirectory
    ) -> (Download, Observer, Task<Void, Never>, Task<DownloadResult, any Error>) {
        let download = Download(url: server.url("/f"), options: options(directory))
        let observer = Observer()
        return (download, observer, observer.watch(download), Task { try await download.run() })
    }

    /// `start`, then pauses the download once bytes have arrived; returns once it is paused.
    static func startPaused(
        _ server: TestServer,
        into directory: TemporaryDirectory
    ) async throws -> (Download, Observer, Task<Void, Never>, Task<DownloadResult, any Error>) {
        let (download, observer, watching, running) = start(server, into: directory)
        try await Polling.until("bytes to arrive", timeout: patience) { observer.downloaded.withLock { $0 } > 0 }
        download.pause()
        try await Polling.until("the paused state", timeout: patience) { download.state == .paused }
        return (download, observer, watching, running)
    }

    @Test("pause saves progress and holds; resume finishes; run() returns once, with the right file")
    func pauseAndResume() async throws {
        let server = try Self.server(holding: true)
        let directory = try TemporaryDirectory(prefix: "braid-api")
        defer {
            server.shutdown()
            directory.remove()
        }
        let (download, observer, watching, running) = try await Self.startPaused(server, into: directory)
        let manifest = try #require(ManifestFile(at: directory.appending("out.bin.braid")))
        #expect(manifest.done > 0 && manifest.done < Int64(Self.content.size))
        download.resume()

        let result = try await running.value
        await watching.value
        #expect(try Self.content.firstDifference(fromFileAt: result.path) == nil)
        let states = observer.states.withLock { $0 }
        #expect(states.contains(.paused))
        #expect(states.last == .completed)
        #expect(download.state == .completed)
    }

    @Test("a pause lifted before the transfer looks still stops it and saves progress; the download then goes on")
    func pauseLiftedAtOnce() async throws {
        let server = try Self.server(holding: true)
        let directory = try TemporaryDirectory(prefix: "braid-api")
        defer {
            server.shutdown()
            directory.remove()
        }
        let (download, observer, watching, running) = Self.start(server, into: directory)
        // All four first responses sent their 256 KiB and hold: only new requests can finish the file.
        try await Polling.until("the four first responses to hold", timeout: Self.patience) {
            server.totalBodyBytesSent >= 4 * (256 << 10)
        }
        server.setRoute("/f", .init(content: Self.content, faults: [.throttle(bytesPerSecond: 512 << 10)]))

        // Both calls come before the transfer's thread can look at either.
        download.pause()
        download.resume()

        do {
            try await Polling.until("the download to stop, go on and finish", timeout: Self.patience) {
                download.state == .completed
            }
        } catch {
            download.cancel()
            _ = await running.result
            throw error
        }
        let result = try await running.value
        await watching.value
        #expect(try Self.content.firstDifference(fromFileAt: result.path) == nil)
        #expect(result.resumedBytes > 0, "the progress saved at the pause was kept")
        #expect(observer.states.withLock { $0 }.contains(.paused))
    }

    @Test("cancel keeping the partial file lets a new download resume it", arguments: [false, true])
    func cancel(removingPartialFile: Bool) async throws {
        let server = try Self.server(holding: true)
        let directory = try TemporaryDirectory(prefix: "braid-api")
        defer {
            server.shutdown()
            directory.remove()
        }
        let (download, _, watching, running) = Self.start(server, into: directory)
        try await Polling.until("bytes to arrive", timeout: Self.patience) {
            (ManifestFile(at: directory.appending("out.bin.braid"))?.done ?? 0) > 0
        }

        download.cancel(removingPartialFile: removingPartialFile)

        let outcome = await running.result
        await watching.value
        #expect((try? outcome.get()) == nil)
        if case let .failure(error) = outcome { #expect((error as? BraidError)?.code == .cancelled) }
        #expect(download.state == .cancelled)
        let part = directory.appending("out.bin.part").path
        #expect(FileManager.default.fileExists(atPath: part) == !removingPartialFile)
        #expect(!FileManager.default.fileExists(atPath: directory.appending("out.bin").path))

        let again = try await Download(url: server.url("/f"), options: Self.options(directory)).run()
        #expect(try Self.content.firstDifference(fromFileAt: again.path) == nil)
        #expect((again.resumedBytes > 0) == !removingPartialFile)
    }

    @Test("cancel while paused says where the progress is kept, or that it was removed", arguments: [false, true])
    func cancelWhilePaused(removingPartialFile: Bool) async throws {
        let server = try Self.server(holding: true)
        let directory = try TemporaryDirectory(prefix: "braid-api")
        defer {
            server.shutdown()
            directory.remove()
        }
        let (download, _, watching, running) = try await Self.startPaused(server, into: directory)

        download.cancel(removingPartialFile: removingPartialFile)

        let outcome = await running.result
        await watching.value
        guard case let .failure(failure) = outcome else {
            Issue.record("a cancelled download completed")
            return
        }
        let error = try #require(failure as? BraidError)
        #expect(error.code == .cancelled)
        let manifest = directory.appending("out.bin.braid").path
        if removingPartialFile {
            #expect(error.message == "cancelled; the partial download was removed.")
            #expect(!FileManager.default.fileExists(atPath: manifest))
        } else {
            #expect(error.message.contains("Progress is saved in \(manifest)"))
            #expect(FileManager.default.fileExists(atPath: manifest))
        }
    }

    @Test("a manager's downloads share the per-host connection cap")
    func managerCaps() async throws {
        let server = try Self.server(rate: 4 << 20)
        let directory = try TemporaryDirectory(prefix: "braid-api")
        defer {
            server.shutdown()
            directory.remove()
        }
        let manager = DownloadManager(
            limits: .init(concurrentDownloads: 3, maximumConnections: 48, maximumConnectionsPerHost: 5)
        )
        let downloads = (0..<3).map { index in
            var options = Self.options(directory, name: "file\(index).bin")
            options.connections = 8
            return manager.makeDownload(url: server.url("/f"), options: options)
        }
        // Sampled on a thread of its own, not a task: on a loaded machine the tasks of other tests can keep the
        // cooperative pool busy for the whole download, and a sampling task would see nothing.
        let peak = Mutex(0)
        let stop = Mutex(false)
        let sampling = Thread {
            while !stop.withLock({ $0 }) {
                let now = manager.connectionsInUse
                peak.withLock { $0 = max($0, now) }
                usleep(2000)
            }
        }
        sampling.start()

        let outcomes = await manager.run(downloads)
        stop.withLock { $0 = true }

        for outcome in outcomes {
            #expect(try Self.content.firstDifference(fromFileAt: try outcome.get().path) == nil)
        }
        #expect(peak.withLock { $0 } <= 5, "never more than 5 connections to the one host")
        #expect(peak.withLock { $0 } >= 3, "all three downloads ran at once")
    }

    @Test("cancelling the task cancels the download, keeping its progress for a new one to resume")
    func taskCancellation() async throws {
        let server = try Self.server(holding: true)
        let directory = try TemporaryDirectory(prefix: "braid-api")
        defer {
            server.shutdown()
            directory.remove()
        }
        let (download, _, watching, running) = Self.start(server, into: directory)
        try await Polling.until("bytes to arrive", timeout: Self.patience) {
            (ManifestFile(at: directory.appending("out.bin.braid"))?.done ?? 0) > 0
        }

        running.cancel()

        let outcome = await running.result
        await watching.value
        if case let .failure(error) = outcome {
            #expect((error as? BraidError)?.code == .cancelled, "\(error)")
        } else {
            Issue.record("the download finished although its task was cancelled")
        }
        #expect(download.state == .cancelled)
        #expect(FileManager.default.fileExists(atPath: directory.appending("out.bin.part").path))
        let again = try await Download(url: server.url("/f"), options: Self.options(directory)).run()
        #expect(again.resumedBytes > 0)
        #expect(try Self.content.firstDifference(fromFileAt: again.path) == nil)
    }

    @Test("cancelling a manager's task cancels its running and queued downloads")
    func managerTaskCancellation() async throws {
        let server = try Self.server(holding: true)
        let directory = try TemporaryDirectory(prefix: "braid-api")
        defer {
            server.shutdown()
            directory.remove()
        }
        let manager = DownloadManager(limits: .init(concurrentDownloads: 1))
        let downloads = (0..<3).map {
            manager.makeDownload(url: server.url("/f"), options: Self.options(directory, name: "m\($0).bin"))
        }
        let running = Task { await manager.run(downloads) }
        try await Polling.until("the first download to write", timeout: Self.patience) {
            (ManifestFile(at: directory.appending("m0.bin.braid"))?.done ?? 0) > 0
        }

        running.cancel()

        let outcomes = await running.value
        #expect(outcomes.count == 3)
        for outcome in outcomes {
            if case let .failure(error) = outcome {
                #expect(error.code == .cancelled, "\(error)")
            } else {
                Issue.record("a download finished although the manager's task was cancelled")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appending("m1.bin.part").path), "queued: untouched")
    }
}
