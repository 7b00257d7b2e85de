import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Synchronization
import Testing

/// `DownloadManager` as one way to run many downloads: one stream of every download's events and outcome, downloads
/// submitted, held, paused, resumed and cancelled while others run, the concurrency changed at run time, and
/// `interruptAll` as SIGINT. Real downloads from the test server; a response that stalls holds a download running
/// for as long as a test needs, so that what must not start cannot, whatever the machine's load.
@Suite("download manager events", .serialized)
struct DownloadManagerEventsTests {
    static let content = TestContent(seed: 43, size: 1 << 20)
    /// Larger than a first piece, so that a download keeps a manifest while it runs (one that fits is one request,
    /// with none).
    static let largerContent = TestContent(seed: 43, size: 2 << 20)
    static let patience = Duration.seconds(90)

    /// Serves `/f` (`content`, 1 MiB unless given). With `stalling`, every body stops after 64 KiB and holds until the client lets go; with
    /// `firstRequests`, only the route's first that many requests do, and later ones are served in full.
    static func server(
        stalling: Bool = false, firstRequests: Int? = nil, content: TestContent = content
    ) throws -> TestServer {
        var faults: [TestServer.Fault] = []
        if stalling {
            let stall = TestServer.Fault.stall(afterBytes: 64 << 10)
            faults.append(firstRequests.map { .onlyFirst(requests: $0, stall) } ?? stall)
        }
        let server = TestServer(routes: ["/f": .init(content: content, faults: faults)])
        try server.start()
        return server
    }

    static func options(_ directory: TemporaryDirectory, _ name: String, connections: Int = 1) -> DownloadOptions {
        var options = DownloadOptions()
        options.destination = .file(directory.appending(name).path)
        options.connections = connections
        options.syncOnCompletion = false
        // A held response is not a stalled one to give up on: only the test's pause or cancel ends it.
        options.stallTimeoutSeconds = 600
        return options
    }

    /// Collects a manager's stream in a task, and lets a test wait until something has arrived.
    final class Recorder: Sendable {
        let events = Mutex<[DownloadManager.Event]>([])
        private let reading = Mutex<Task<Void, Never>?>(nil)

        init(_ manager: DownloadManager) {
            let stream = manager.events
            reading.withLock {
                $0 = Task { [self] in
                    for await event in stream { events.withLock { $0.append(event) } }
                }
            }
        }

        /// Returns once the stream has ended.
        func end() async {
            await reading.withLock { $0 }?.value
        }

        func until(_ what: String, _ condition: @escaping @Sendable ([DownloadManager.Event]) -> Bool) async throws {
            try await Polling.until(what, timeout: DownloadManagerEventsTests.patience) {
                events.withLock { condition($0) }
            }
        }

        /// What happened to `download`, in order: `running`, the states it reported, `finished` with its code.
        func story(of download: Download) -> [String] {
            events.withLock { events in
                events.compactMap { event -> String? in
                    guard event.download === download else { return nil }
                    switch event {
                    case .running: return "running"
                    case let .reported(_, .state(state)): return state.rawValue
                    case let .finished(_, .success(result)): return "finished \(result.bytes)"
                    case let .finished(_, .failure(error)): return "finished \(error.code)"
                    case .reported: return nil
                    }
                }
            }
        }
    }

    /// Whether `events` hold a `running` of `download`.
    static func ran(_ download: Download, _ events: [DownloadManager.Event]) -> Bool {
        events.contains { if case .running(let other) = $0 { other === download } else { false } }
    }

    /// Whether `events` hold progress of `download` with bytes received.
    static func received(_ download: Download, _ events: [DownloadManager.Event]) -> Bool {
        events.contains {
            if case let .reported(other, .progress(progress)) = $0 {
                other === download && progress.downloadedBytes > 0
            } else {
                false
            }
        }
    }

    /// Whether `events` hold the end of `download`.
    static func finished(_ download: Download, _ events: [DownloadManager.Event]) -> Bool {
        events.contains { if case .finished(let other, _) = $0 { other === download } else { false } }
    }

    @Test(
        "each download's events come between its running and its finished; one submitted later joins; finish() ends it")
    func streamOrder() async throws {
        let server = try Self.server()
        let directory = try TemporaryDirectory(prefix: "braid-manager")
        defer {
            server.shutdown()
            directory.remove()
        }
        let manager = DownloadManager(limits: .init(concurrentDownloads: 1))
        let recorder = Recorder(manager)
        let first = manager.makeDownload(url: server.url("/f"), options: Self.options(directory, "a.bin"))
        let second = manager.makeDownload(url: server.url("/f"), options: Self.options(directory, "b.bin"))
        manager.submit(first)
        try await recorder.until("the first to run") { Self.ran(first, $0) }
        manager.submit(second)
        manager.finish()
        await recorder.end()

        let done = "finished \(Self.content.size)"
        #expect(recorder.story(of: first) == ["running", "probing", "downloading", "verifying", "completed", done])
        #expect(recorder.story(of: second) == ["running", "probing", "downloading", "verifying", "completed", done])
        let events = recorder.events.withLock { $0 }
        let firstFinished = try #require(
            events.firstIndex { if case .finished(let download, _) = $0 { download === first } else { false } })
        let secondRunning = try #require(
            events.firstIndex { if case .running(let download) = $0 { download === second } else { false } })
        #expect(firstFinished < secondRunning, "one at a time")
        for name in ["a.bin", "b.bin"] {
            #expect(try Self.content.firstDifference(fromFileAt: directory.appending(name).path) == nil)
        }
    }

    @Test("a manager made without streaming states streams no state or result; each download's own events keep them")
    func withoutStates() async throws {
        let server = try Self.server()
        let directory = try TemporaryDirectory(prefix: "braid-manager")
        defer {
            server.shutdown()
            directory.remove()
        }
        let manager = DownloadManager(limits: .init(concurrentDownloads: 1), streamingStates: false)
        let recorder = Recorder(manager)
        let first = manager.makeDownload(url: server.url("/f"), options: Self.options(directory, "a.bin"))
        let held = manager.makeDownload(url: server.url("/f"), options: Self.options(directory, "b.bin"))
        let own = Task { [events = held.events] in
            var all: [DownloadEvent] = []
            for await event in events { all.append(event) }
            return all
        }
        manager.submit(first)
        manager.submit(held, paused: true)
        try await recorder.until("the first to finish") { Self.finished(first, $0) }
        manager.resume(held)
        manager.finish()
        await recorder.end()

        let done = "finished \(Self.content.size)"
        #expect(recorder.story(of: first) == ["running", done])
        #expect(recorder.story(of: held) == ["running", done])
        let events = recorder.events.withLock { $0 }
        let completions = events.filter { if case .reported(_, .completed) = $0 { true } else { false } }
        #expect(completions.isEmpty)
        for download in [first, held] {
            #expect(
                events.contains {
                    if case .reported(let other, .started) = $0 { other === download } else { false }
                }, "its start is streamed")
        }
        let states = await own.value.compactMap { if case let .state(state) = $0 { state.rawValue } else { nil } }
        #expect(states == ["paused", "queued", "probing", "downloading", "verifying", "completed"])
        for name in ["a.bin", "b.bin"] {
            #expect(try Self.content.firstDifference(fromFileAt: directory.appending(name).path) == nil)
        }
    }

    @Test("a held download waits; a paused one gives its slot to the next and goes on after; both files are right")
    func holdPauseResume() async throws {
        // The first run's two requests (the probe and its GET) hold; everything after is served in full.
        let server = try Self.server(stalling: true, firstRequests: 2)
        let directory = try TemporaryDirectory(prefix: "braid-manager")
        defer {
            server.shutdown()
            directory.remove()
        }
        let manager = DownloadManager(limits: .init(concurrentDownloads: 1))
        let recorder = Recorder(manager)
        let paused = manager.makeDownload(url: server.url("/f"), options: Self.options(directory, "paused.bin"))
        let held = manager.makeDownload(url: server.url("/f"), options: Self.options(directory, "held.bin"))
        manager.submit([paused, held])
        try await recorder.until("bytes of the first") { Self.received(paused, $0) }

        manager.pause(held)
        manager.pause(paused)
        try await recorder.until("the first to pause") { _ in paused.state == .paused }
        #expect(!Self.ran(held, recorder.events.withLock { $0 }), "held: its slot stays free")
        #expect(held.state == .paused)
        manager.resume(paused)
        manager.resume(held)
        manager.finish()
        await recorder.end()

        let done = "finished \(Self.content.size)"
        #expect(
            recorder.story(of: held) == [
                "paused", "queued", "running", "probing", "downloading", "verifying", "completed", done,
            ])
        let story = recorder.story(of: paused)
        #expect(story.first == "running" && story.last == done, "\(story)")
        #expect(story.filter { $0 == "running" }.count == 2, "it goes on once resumed: \(story)")
        #expect(story.contains("paused"), "\(story)")
        for name in ["paused.bin", "held.bin"] {
            #expect(try Self.content.firstDifference(fromFileAt: directory.appending(name).path) == nil)
        }
    }

    @Test(
        "cancel ends a waiting download at once, untouched; interruptAll interrupts the running one and ends the rest"
    )
    func cancelAndInterrupt() async throws {
        let server = try Self.server(stalling: true, content: Self.largerContent)
        let directory = try TemporaryDirectory(prefix: "braid-manager")
        defer {
            server.shutdown()
            directory.remove()
        }
        let manager = DownloadManager(limits: .init(concurrentDownloads: 1))
        let recorder = Recorder(manager)
        let names = ["a.bin", "b.bin", "c.bin", "d.bin"]
        let downloads = names.map {
            manager.makeDownload(url: server.url("/f"), options: Self.options(directory, $0))
        }
        manager.submit(Array(downloads.prefix(3)))
        try await recorder.until("bytes of the first") { Self.received(downloads[0], $0) }

        manager.cancel(downloads[1])
        try await recorder.until("the cancelled one to finish") { Self.finished(downloads[1], $0) }
        manager.interruptAll()
        manager.submit(downloads[3])
        manager.finish()
        await recorder.end()

        #expect(recorder.story(of: downloads[0]).suffix(2) == ["failed", "finished interrupted"])
        #expect(recorder.story(of: downloads[1]) == ["cancelled", "finished cancelled"])
        #expect(recorder.story(of: downloads[2]) == ["failed", "finished interrupted"])
        #expect(recorder.story(of: downloads[3]) == ["failed", "finished interrupted"])
        #expect(downloads[2].state == .failed)
        let messages = recorder.events.withLock { events in
            events.compactMap { event -> String? in
                if case let .finished(download, .failure(error)) = event, download === downloads[2] {
                    error.message
                } else {
                    nil
                }
            }
        }
        #expect(messages == ["interrupted before it started"])
        #expect(
            (ManifestFile(at: directory.appending("a.bin.braid"))?.done ?? 0) > 0, "the running one saved its progress")
        for name in names.dropFirst() {
            #expect(!FileManager.default.fileExists(atPath: directory.appending(name + ".part").path), "\(name)")
        }
    }

    @Test("raising concurrentDownloads while one runs starts the next at once")
    func raiseConcurrency() async throws {
        let server = try Self.server(stalling: true)
        let directory = try TemporaryDirectory(prefix: "braid-manager")
        defer {
            server.shutdown()
            directory.remove()
        }
        let manager = DownloadManager(limits: .init(concurrentDownloads: 1))
        let recorder = Recorder(manager)
        let first = manager.makeDownload(url: server.url("/f"), options: Self.options(directory, "a.bin"))
        let second = manager.makeDownload(url: server.url("/f"), options: Self.options(directory, "b.bin"))
        manager.submit([first, second])
        try await recorder.until("bytes of the first") { Self.received(first, $0) }
        #expect(!Self.ran(second, recorder.events.withLock { $0 }), "the first holds the only slot")

        manager.concurrentDownloads = .fixed(2)

        try await recorder.until("bytes of the second") { Self.received(second, $0) }
        #expect(manager.limits.concurrentDownloads == .fixed(2))
        manager.interruptAll()
        manager.finish()
        await recorder.end()
    }

    @Test("automatic: small files from one host run as many at a time as the per-host cap, no more")
    func automaticSmallFiles() async throws {
        // Every body holds after 64 KiB: the downloads that start keep running until they are interrupted.
        let server = try Self.server(stalling: true)
        let directory = try TemporaryDirectory(prefix: "braid-manager")
        defer {
            server.shutdown()
            directory.remove()
        }
        let manager = DownloadManager(limits: .init(concurrentDownloads: .automatic, maximumConnectionsPerHost: 4))
        let recorder = Recorder(manager)
        let downloads = (0..<12).map {
            // Each asks for 8 connections, but 1 MiB is one piece: once probed, each plans one.
            manager.makeDownload(url: server.url("/f"), options: Self.options(directory, "\($0).bin", connections: 8))
        }
        manager.submit(downloads)
        try await recorder.until("four downloads to receive bytes") { events in
            downloads.filter { Self.received($0, events) }.count == 4
        }

        manager.interruptAll()
        manager.finish()
        await recorder.end()

        let events = recorder.events.withLock { $0 }
        #expect(downloads.filter { Self.ran($0, events) }.count == 4, "the host's 4 connections, one file each")
        #expect(downloads.prefix(4).allSatisfy { Self.ran($0, events) }, "in list order")
    }
}
