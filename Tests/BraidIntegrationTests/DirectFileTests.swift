import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A list's small files go as direct files (`DirectFile`): one GET each on the lane's pool thread, placed there with
/// no download of their own. Whatever that GET does not end goes on as a download from where it got to, or from the
/// start when nothing was asked: no request twice, the same files, events and errors as the full path gives.
@Suite("a list's direct files", .serialized)
struct DirectFileTests {
    static let small = TestContent(seed: 81, size: 20 << 10)
    static let other = TestContent(seed: 82, size: 30 << 10)
    static let large = TestContent(seed: 83, size: 3 << 20)

    /// A server, a scratch directory with an `out` folder, and the list file written into it.
    typealias Fixture = ListDownloadTests.Fixture

    @Test("small, redirected, large, missing and server-named files in one list: one request each, right files")
    func eachRequestOnce() async throws {
        let fixture = try Fixture(routes: [
            "/a.bin": .init(content: Self.small),
            "/b.bin": .init(content: Self.other),
            "/moved": .init(content: Self.small, faults: [.redirect(status: 302, to: .path("/target.bin"))]),
            "/target.bin": .init(content: Self.small),
            "/large.bin": .init(content: Self.large),
            "/missing.bin": .init(size: 1000, faults: [.status(404, retryAfter: nil)]),
            "/named": .init(content: Self.other, faults: [.contentDisposition("attachment; filename=\"given.bin\"")]),
        ])
        defer { fixture.shutdown() }
        let server = fixture.server
        let list = try fixture.list(
            """
            \(server.url("/a.bin"))
            \(server.url("/b.bin"))
            \(server.url("/moved"))
              out=moved.bin
            \(server.url("/large.bin"))
            \(server.url("/missing.bin"))
            \(server.url("/named"))
            """)

        let run = try await BraidCLI.run(["-i", list, "-d", fixture.output("").path, "-j", "8", "--no-fsync"])

        #expect(run.status == .exited(5), "the 404 is the only failure: \(run.standardError)")
        let expected: [(String, TestContent)] = [
            ("a.bin", Self.small), ("b.bin", Self.other), ("moved.bin", Self.small), ("large.bin", Self.large),
            ("given.bin", Self.other),
        ]
        for (name, content) in expected {
            #expect(try content.firstDifference(fromFileAt: fixture.output(name).path) == nil, "\(name)")
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: fixture.output("").path).sorted()
                == expected.map(\.0).sorted())
        #expect(run.standardError.contains("404"))
        let requests = fixture.requestLines
        for target in ["/a.bin", "/b.bin", "/moved", "/target.bin", "/missing.bin", "/named"] {
            #expect(requests.filter { $0.hasPrefix("GET \(target) ") }.count == 1, "\(target): \(requests)")
        }
        // The large file's first GET is its transfer's first request: nothing asks for its first bytes again.
        #expect(requests.filter { $0.hasPrefix("GET /large.bin bytes=0-") }.count == 1, "\(requests)")
        #expect(requests.allSatisfy { $0.hasPrefix("GET ") }, "\(requests)")
    }

    @Test("a direct file's JSON events are a download's read whole, and its server digest is checked")
    func jsonEvents() async throws {
        let fixture = try Fixture(routes: [
            "/a.bin": .init(content: Self.small, faults: [.contentMD5(correct: true)])
        ])
        defer { fixture.shutdown() }
        let list = try fixture.list("\(fixture.server.url("/a.bin"))\n")

        let run = try await BraidCLI.run(["-i", list, "-d", fixture.output("").path, "--no-fsync", "--json"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        let events = try JSONEvents(run.standardOutput)
        // A body that came in pieces reports progress too, as a download's does: what the pieces are is the
        // network's choice.
        let about = events.about(1).compactMap { line -> String? in
            let name = line["event"] as! String
            return name == "progress" ? nil : name == "state" ? "state \(line["state"] as! String)" : name
        }
        #expect(
            about == [
                "state queued", "state probing", "start", "state downloading", "state verifying", "state completed",
                "verified", "done",
            ], "\(about)")
        #expect(events.named("verified").first?["algorithm"] as? String == "md5")
        #expect(events.named("done").first?["skipped"] as? Bool == false)
        #expect(try Self.small.firstDifference(fromFileAt: fixture.output("a.bin").path) == nil)
    }

    @Test("a slow small file reports its start once and its progress as it comes, before its end")
    func slowFileProgress() async throws {
        let slow = TestContent(seed: 84, size: 192 << 10)
        let fixture = try Fixture(routes: [
            "/slow.bin": .init(content: slow, faults: [.throttle(bytesPerSecond: 128 << 10)])
        ])
        defer { fixture.shutdown() }
        let list = try fixture.list("\(fixture.server.url("/slow.bin"))\n")

        let run = try await BraidCLI.run([
            "-i", list, "-d", fixture.output("").path, "--no-fsync", "--json", "--progress-interval", "0.2",
        ])

        #expect(run.status == .exited(0), "\(run.standardError)")
        let events = try JSONEvents(run.standardOutput)
        let names = events.about(1).map { $0["event"] as! String }
        #expect(names.filter { $0 == "start" }.count == 1, "\(names)")
        let start = try #require(names.firstIndex(of: "start"))
        let progress = names.indices.filter { names[$0] == "progress" }
        #expect(!progress.isEmpty, "a second and a half of body reports progress: \(names)")
        #expect(progress.allSatisfy { $0 > start && $0 < names.firstIndex(of: "done")! }, "\(names)")
        #expect(try slow.firstDifference(fromFileAt: fixture.output("slow.bin").path) == nil)
    }

    @Test("a small file that fails its Content-MD5 is not placed: the full path refuses it, as it would alone")
    func digestFailureGoesOn() async throws {
        let fixture = try Fixture(routes: [
            "/bad.bin": .init(content: Self.small, faults: [.contentMD5(correct: false)]),
            "/good.bin": .init(content: Self.other),
        ])
        defer { fixture.shutdown() }
        let list = try fixture.list(
            """
            \(fixture.server.url("/bad.bin"))
            \(fixture.server.url("/good.bin"))
            """)

        let run = try await BraidCLI.run([
            "-i", list, "-d", fixture.output("").path, "--no-fsync", "--max-tries", "1",
        ])

        #expect(run.status == .exited(6), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: fixture.output("bad.bin").path))
        #expect(try Self.other.firstDifference(fromFileAt: fixture.output("good.bin").path) == nil)
        #expect(run.standardError.contains("md5"), "\(run.standardError)")
    }

    @Test(
        "a complete file, and a partial one with its manifest, are found before any request, as the full path finds them"
    )
    func destinationNotFree() async throws {
        let fixture = try Fixture(routes: [
            "/done.bin": .init(content: Self.small),
            "/half.bin": .init(content: Self.large, faults: [.throttle(bytesPerSecond: 512 << 10)]),
        ])
        defer { fixture.shutdown() }
        let list = try fixture.list(
            """
            \(fixture.server.url("/done.bin"))
            \(fixture.server.url("/half.bin"))
            """)
        // A first run of the large file alone, stopped once some of it is in: its partial file and manifest stay.
        let manifest = fixture.output("half.bin.braid")
        let first = try BraidCLI.start([
            fixture.server.url("/half.bin"), "-o", fixture.output("half.bin").path, "-n", "1", "--no-fsync",
        ])
        defer { first.stop(signal: SIGKILL) }
        try await first.waitUntil("some progress checkpointed", timeout: .seconds(60)) {
            (ManifestFile(at: manifest)?.done ?? 0) > 0
        }
        first.send(SIGINT)
        #expect(try await first.waitForExit(timeout: .seconds(20)) == .exited(130))
        try Data(Self.small.bytes(in: 0..<Self.small.size)).write(to: fixture.output("done.bin"))
        let fromStart = { fixture.requestLines.filter { $0.hasPrefix("GET /half.bin bytes=0-") }.count }
        let before = fromStart()

        let run = try await BraidCLI.run(["-i", list, "-d", fixture.output("").path, "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.small.firstDifference(fromFileAt: fixture.output("done.bin").path) == nil)
        #expect(try Self.large.firstDifference(fromFileAt: fixture.output("half.bin").path) == nil)
        let rows = ListDownloadTests.summaryRows(run.standardError)
        #expect(rows["done.bin"]?.hasPrefix("skipped") == true, "\(rows)")
        #expect(rows["half.bin"]?.hasPrefix("completed") == true, "\(rows)")
        // The partial file was resumed, not fetched again from its start.
        #expect(fromStart() == before, "\(fixture.requestLines)")
    }

    @Test("one after the other on one handle, a file's login and header do not go with the next file's request")
    func nothingCarriesOver() async throws {
        let fixture = try Fixture(routes: [
            "/a.bin": .init(content: Self.small),
            "/b.bin": .init(content: Self.other),
            "/c.bin": .init(content: Self.small),
        ])
        defer { fixture.shutdown() }
        let url = { (path: String) in fixture.server.url(path) }
        let withLogin = url("/a.bin").replacingOccurrences(of: "http://", with: "http://user:secret@")
        let list = try fixture.list(
            """
            \(withLogin)
              header=X-Only-First: 1
            \(url("/b.bin"))
            \(url("/c.bin"))
            """)

        // One at a time: each request reuses the handle the one before read its file whole with.
        let run = try await BraidCLI.run(["-i", list, "-d", fixture.output("").path, "-j", "1", "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        fixture.server.waitUntilIdle()
        let log = fixture.server.requestLog
        let first = try #require(log.first { $0.target == "/a.bin" })
        #expect(first.authorization != nil && first.headerNames.contains("x-only-first"))
        for later in log where later.target != "/a.bin" {
            #expect(later.authorization == nil, "\(later.target)")
            #expect(!later.headerNames.contains("x-only-first"), "\(later.target): \(later.headerNames)")
        }
        #expect(try Self.other.firstDifference(fromFileAt: fixture.output("b.bin").path) == nil)
    }

    @Test("a manager's direct files and downloads share its queue, and each tells its end once")
    func managerSubmissions() async throws {
        let fixture = try Fixture(routes: [
            "/a.bin": .init(content: Self.small),
            "/b.bin": .init(content: Self.other),
            "/large.bin": .init(content: Self.large),
        ])
        defer { fixture.shutdown() }
        let manager = DownloadManager(limits: .init(concurrentDownloads: .fixed(2)), streamingStates: false)
        let events = manager.events
        let ends = Mutex<[Int: [String]]>([:])
        var submissions: [DownloadManager.Submission] = []
        for (tag, path) in ["/a.bin", "/b.bin", "/large.bin"].enumerated() {
            var options = DownloadOptions()
            options.destination = .below(fixture.output("").path, subdirectory: "", name: String(path.dropFirst()))
            options.syncOnCompletion = false
            submissions.append(
                manager.makeSubmission(url: fixture.server.url(path), options: options, label: path, tag: tag) {
                    file, report in
                    let said: String
                    switch report {
                    case .reported: return
                    case .completed: said = "completed"
                    case .stopped: said = "stopped"
                    case .handedOver: said = "handed over"
                    }
                    ends.withLock { $0[file.tag, default: []].append(said) }
                })
        }
        #expect(submissions.allSatisfy { if case .file = $0 { true } else { false } })
        manager.submit(submissions)
        // Submitted again: refused, once.
        manager.submit([submissions[0]])
        manager.finish()
        var finished = 0
        for await event in events {
            if case let .finished(_, result) = event {
                finished += 1
                #expect((try? result.get()) != nil, "\(result)")
            }
        }

        let told = ends.withLock { $0 }
        #expect(told[0]?.sorted() == ["completed", "stopped"], "the second submission is refused: \(told)")
        #expect(told[1] == ["completed"], "\(told)")
        #expect(told[2] == ["handed over"], "too long to read whole: \(told)")
        #expect(finished == 1, "only the download handed over is on the stream")
        for (name, content) in [("a.bin", Self.small), ("b.bin", Self.other), ("large.bin", Self.large)] {
            #expect(try content.firstDifference(fromFileAt: fixture.output(name).path) == nil, "\(name)")
        }
    }

    @Test("a rerun over a list already there: every file is found complete, none left unfinished")
    func rerunOverFinishedList() async throws {
        // Each file is found at its place before its request and handed over to a download, which takes its place
        // in the queue under the file's id. Once a file object went, a file made later could be given its address,
        // and so its id: the queue took it for the running download, never started it, and the list ended with it
        // "not finished" (about 2 % of 10,000 files). Enough files here for addresses to come round again.
        let count = 600
        let content = TestContent(seed: 7, size: 100)
        var routes: [String: TestServer.Route] = [:]
        for index in 0..<count { routes["/f\(index).bin"] = .init(content: content) }
        let fixture = try Fixture(routes: routes)
        defer { fixture.shutdown() }
        try FileManager.default.createDirectory(at: fixture.output(""), withIntermediateDirectories: true)
        let bytes = Data(content.bytes(in: 0..<content.size))
        for index in 0..<count { try bytes.write(to: fixture.output("f\(index).bin")) }
        let list = try fixture.list((0..<count).map { fixture.server.url("/f\($0).bin") }.joined(separator: "\n"))

        let run = try await BraidCLI.run(["-i", list, "-d", fixture.output("").path, "-j", "16", "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError.suffix(600))")
        #expect(!run.standardError.contains("not finished"))
        #expect(run.standardError.components(separatedBy: "is already complete").count - 1 == count)
    }

    @Test("flushed direct files wait for their names out of the queue, and each tells its end before the stream ends")
    func flushedFilesNamed() async throws {
        let contents = (0..<24).map { TestContent(seed: 100 + UInt64($0), size: UInt64(4 << 10 + $0 * 100)) }
        var routes: [String: TestServer.Route] = [:]
        for (index, content) in contents.enumerated() { routes["/f\(index).bin"] = .init(content: content) }
        let fixture = try Fixture(routes: routes)
        defer { fixture.shutdown() }
        // Twice: the first run's first files name themselves, after which this process is known to name unnamed
        // files, so that every file of the second goes through the manager's naming queue.
        for round in ["one", "two"] {
            let manager = DownloadManager(limits: .init(concurrentDownloads: .fixed(8)), streamingStates: false)
            let events = manager.events
            let ends = Mutex<[Int: [String]]>([:])
            var submissions: [DownloadManager.Submission] = []
            for index in contents.indices {
                var options = DownloadOptions()
                options.destination = .below(fixture.output("").path, subdirectory: round, name: "f\(index).bin")
                #expect(options.syncOnCompletion, "flushed, as by default")
                submissions.append(
                    manager.makeSubmission(
                        url: fixture.server.url("/f\(index).bin"), options: options, label: "f\(index)", tag: index
                    ) { file, report in
                        let said: String
                        switch report {
                        case .reported: return
                        case let .completed(result, _): said = "completed \(result.bytes)"
                        case let .stopped(error, _): said = "stopped \(error)"
                        case .handedOver: said = "handed over"
                        }
                        ends.withLock { $0[file.tag, default: []].append(said) }
                    })
            }
            manager.submit(submissions)
            manager.finish()
            for await _ in events {}
            // The stream ended: every file has told its end by now.
            let told = ends.withLock { $0 }
            for (index, content) in contents.enumerated() {
                #expect(told[index] == ["completed \(content.size)"], "\(round) f\(index): \(told[index] ?? [])")
                #expect(
                    try content.firstDifference(fromFileAt: fixture.output("\(round)/f\(index).bin").path) == nil,
                    "\(round) f\(index)")
            }
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: fixture.output(round).path).count == contents.count)
        }
    }
}

extension ListDownloadTests.Fixture {
    /// Every finished request, once the server is idle, as "METHOD target range".
    var requestLines: [String] {
        server.waitUntilIdle()
        return server.requestLog.map { "\($0.method) \($0.target) \($0.range ?? "-")" }
    }
}
