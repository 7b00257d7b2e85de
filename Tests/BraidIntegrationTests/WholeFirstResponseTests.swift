import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Synchronization
import Testing

/// A list's file that fits in one request is read whole by that request, its first GET (`Prober.readsWhole`), and
/// written and checked by its download with no transfer to run: nothing is on disk until all of it has come, the
/// download still reports its start and its progress, and a response that lies about its body is asked again or
/// refused as any other.
@Suite("a list's small file read whole by its first request", .serialized)
struct WholeFirstResponseTests {
    static let content = TestContent(seed: 61, size: 400 << 10)

    static func serve(_ faults: [TestServer.Fault]) throws -> TestServer {
        let server = TestServer(routes: ["/f": .init(content: content, faults: faults)])
        try server.start()
        return server
    }

    /// A download into `path`, without the flush before the rename.
    static func options(_ path: String) -> DownloadOptions {
        var options = DownloadOptions()
        options.destination = .file(path)
        options.syncOnCompletion = false
        return options
    }

    /// A manager's download of `/f` into a fresh directory (`f.bin` there), from a server whose first response holds
    /// after 64 KiB: until the download gives it up, or for as long as the test needs.
    struct Held {
        let server: TestServer
        let directory: TemporaryDirectory
        let path: String
        let manager = DownloadManager()
        let download: Download

        init(configure: (inout DownloadOptions) -> Void) throws {
            server = try WholeFirstResponseTests.serve([.onlyFirst(requests: 1, .stall(afterBytes: 64 << 10))])
            directory = try TemporaryDirectory(prefix: "braid-whole")
            path = directory.appending("f.bin").path
            var options = WholeFirstResponseTests.options(path)
            configure(&options)
            download = manager.makeDownload(url: server.url("/f"), options: options)
        }

        func shutdown() {
            server.shutdown()
            directory.remove()
        }
    }

    /// Runs one download of `/f` in a manager, as a list's downloads run; returns it, its outcome and its events.
    static func run(
        _ server: TestServer, into path: String, configure: (inout DownloadOptions) -> Void = { _ in }
    ) async -> (Download, Result<DownloadResult, BraidError>, [DownloadEvent]) {
        var options = Self.options(path)
        configure(&options)
        let manager = DownloadManager()
        let download = manager.makeDownload(url: server.url("/f"), options: options)
        let events = Mutex<[DownloadEvent]>([])
        let reading = Task {
            for await event in download.events {
                // Looked at as it comes: whether the partial file exists while the body arrives.
                if case .progress = event, FileManager.default.fileExists(atPath: path + ".part") {
                    events.withLock { $0.append(.notice("a partial file exists")) }
                }
                events.withLock { $0.append(event) }
            }
        }
        let outcome = await manager.run([download])[0]
        await reading.value
        return (download, outcome, events.withLock { $0 })
    }

    @Test("a small file held mid-body has reported its start and progress, and nothing of it is on disk yet")
    func heldSmallFile() async throws {
        // The first response holds after 64 KiB until the download gives it up (1 s without a byte) and asks again.
        let server = try Self.serve([.onlyFirst(requests: 1, .stall(afterBytes: 64 << 10))])
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-whole")
        defer { directory.remove() }
        let path = directory.appending("f.bin").path

        let (_, outcome, events) = await Self.run(server, into: path) { $0.stallTimeoutSeconds = 1 }

        let result = try outcome.get()
        #expect(result.bytes == Int64(Self.content.size))
        #expect(try Self.content.firstDifference(fromFileAt: path) == nil)
        #expect(server.waitUntilIdle())
        #expect(server.requestLog.map(\.method) == ["GET", "GET"], "\(server.requestLog)")
        let started = events.firstIndex { if case .started = $0 { true } else { false } }
        let progress = events.indices.filter { index in
            if case let .progress(progress) = events[index] {
                progress.downloadedBytes > 0 && progress.downloadedBytes < Int64(Self.content.size)
            } else {
                false
            }
        }
        #expect(started != nil && !progress.isEmpty, "\(events)")
        #expect(progress.allSatisfy { $0 > started ?? .max }, "the start comes before the progress")
        // Each progress event was looked at as it came, while its bytes were held in memory.
        #expect(!events.contains { if case .notice("a partial file exists") = $0 { true } else { false } })
    }

    @Test("a first response shorter than its head said is asked again, and the file is right")
    func shortBodyAskedAgain() async throws {
        let server = try Self.serve([.onlyFirst(requests: 1, .shortBody(missingBytes: 1000))])
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-whole")
        defer { directory.remove() }
        let path = directory.appending("f.bin").path

        let (_, outcome, _) = await Self.run(server, into: path)

        #expect(try outcome.get().bytes == Int64(Self.content.size))
        #expect(try Self.content.firstDifference(fromFileAt: path) == nil)
        #expect(server.waitUntilIdle())
        let log = server.requestLog
        #expect(log.map(\.method) == ["GET", "GET"], "\(log)")
        #expect(log.allSatisfy { $0.range == "bytes=0-1048575" }, "\(log.map(\.range))")
    }

    @Test("a small file read whole that fails its Content-MD5 is refused, and nothing takes its name")
    func wrongDigestRefused() async throws {
        let server = try Self.serve([.contentMD5(correct: false)])
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-whole")
        defer { directory.remove() }
        let path = directory.appending("f.bin").path

        let (_, outcome, _) = await Self.run(server, into: path)

        guard case let .failure(error) = outcome else {
            Issue.record("a file that fails its digest was accepted")
            return
        }
        #expect(error.code == .integrity && error.message.contains("md5 mismatch"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(server.requestLog.map(\.method) == ["GET"], "\(server.requestLog)")
    }

    @Test("a file read whole reports its start once, before its check and its end, however many pieces it came in")
    func startReportedOnce() async throws {
        let tiny = TestContent(seed: 62, size: 4096)
        let server = TestServer(routes: ["/f": .init(content: tiny)])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-whole")
        defer { directory.remove() }
        let path = directory.appending("f.bin").path

        let (_, outcome, events) = await Self.run(server, into: path)

        #expect(try outcome.get().bytes == 4096)
        #expect(try tiny.firstDifference(fromFileAt: path) == nil)
        let started = events.indices.filter { if case .started = events[$0] { true } else { false } }
        let verifying = events.firstIndex { if case .state(.verifying) = $0 { true } else { false } }
        let completed = events.firstIndex { if case .completed = $0 { true } else { false } }
        #expect(started.count == 1, "\(events)")
        #expect(started.first.map { $0 < (verifying ?? -1) && $0 < (completed ?? -1) } == true, "\(events)")
        if case let .started(resource, startedPath, resumed) = events[started[0]] {
            #expect(resource.length == 4096 && startedPath == path && resumed == 0)
        }
    }

    @Test("a small file read whole with a right Content-MD5 is checked and named, with no partial file or manifest")
    func rightDigestPlaced() async throws {
        let server = try Self.serve([.contentMD5(correct: true)])
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-whole")
        defer { directory.remove() }
        let path = directory.appending("f.bin").path

        let (_, outcome, _) = await Self.run(server, into: path)

        let result = try outcome.get()
        #expect(result.verifiedDigest?.algorithm == .md5, "\(result)")
        #expect(try Self.content.firstDifference(fromFileAt: path) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["f.bin"])
        // The permissions of any new file (0666 less the umask), as curl's.
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o666 & ~Self.umask(), "\(String(mode ?? 0, radix: 8))")
    }

    @Test("a file that appears at the final name while a small file is read whole is left alone")
    func finalAppearingIsKept() async throws {
        // The first response holds until the download gives it up (1 s without a byte) and asks again; the file
        // appears meanwhile, after the look before the probe.
        let held = try Held { $0.stallTimeoutSeconds = 1 }
        defer { held.shutdown() }
        let (server, directory, path) = (held.server, held.directory, held.path)
        let planted = Data("someone else's file".utf8)
        let reading = Task {
            for await event in held.download.events {
                if case .started = event { _ = FileManager.default.createFile(atPath: path, contents: planted) }
            }
        }
        let outcome = await held.manager.run([held.download])[0]
        await reading.value

        guard case let .failure(error) = outcome else {
            Issue.record("the download replaced a file that appeared at its name")
            return
        }
        #expect(error.code == .fileExists && error.message.contains("appeared while downloading"), "\(error)")
        #expect(FileManager.default.contents(atPath: path) == planted)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["f.bin"])
        #expect(server.waitUntilIdle())
        #expect(server.requestLog.map(\.method) == ["GET", "GET"], "\(server.requestLog)")
    }

    /// The process's umask, read without changing it for long: set and restored at once, in a serialized suite.
    static func umask() -> Int {
        let mask = Foundation.umask(0o022)
        _ = Foundation.umask(mask)
        return Int(mask)
    }

    @Test("a rate limit keeps the transfer: the partial file is made before the body is all in")
    func rateLimitKeepsTheTransfer() async throws {
        // The first response holds for as long as the test needs.
        let held = try Held { $0.rateLimit = 8 << 20 }
        defer { held.shutdown() }
        let (manager, download, path) = (held.manager, held.download, held.path)
        let running = Task { await manager.run([download])[0] }

        // Read whole, the held body would never reach the disk.
        try await Polling.until("the partial file", timeout: .seconds(60)) {
            FileManager.default.fileExists(atPath: path + ".part")
        }
        manager.cancel(download)

        guard case let .failure(error) = await running.value else {
            Issue.record("a held download completed")
            return
        }
        #expect(error.code == .cancelled, "\(error)")
    }
}
