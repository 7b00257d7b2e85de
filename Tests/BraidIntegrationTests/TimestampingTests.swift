import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// `-N`: a file as new as the server's is left alone after one conditional request; any other is downloaded and
/// replaces it, and gets the server's time so that the next run can compare.
@Suite("-N, --timestamping")
struct TimestampingTests {
    /// A test server with the file at `/f`, and a scratch directory where `path` is the local copy.
    struct Fixture {
        let server: TestServer
        let directory: TemporaryDirectory
        var path: String { directory.appending("f").path }

        init(_ route: TestServer.Route) throws {
            server = TestServer(routes: ["/f": route])
            try server.start()
            do {
                directory = try TemporaryDirectory(prefix: "braid-tstamp")
            } catch {
                server.shutdown()
                throw error
            }
        }

        func shutdown() {
            server.shutdown()
            directory.remove()
        }
    }

    static let content = TestContent(seed: 4343, size: 3 << 20)

    /// The file's modification time, in seconds since 1970 (with its fraction).
    static func modified(_ path: String) throws -> Double? {
        (try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)?.timeIntervalSince1970
    }

    /// The file's inode: a file replaced by a rename has a new one.
    static func inode(_ path: String) throws -> Int? {
        try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
    }

    /// Writes `bytes` at `path` and dates it `secondsSince1970`.
    static func plant(_ bytes: Data, at path: String, modified secondsSince1970: Double) throws {
        try bytes.write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: secondsSince1970)], ofItemAtPath: path)
    }

    @Test("no local file: downloaded, dated with Last-Modified; run again: one HEAD answered 304, the file untouched")
    func upToDate() async throws {
        let fixture = try Fixture(.init(content: Self.content))
        defer { fixture.shutdown() }
        let (server, path) = (fixture.server, fixture.path)

        let first = try await BraidCLI.run([server.url("/f"), "-N", "-o", path])
        #expect(first.status == .exited(0), "\(first.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: path) == nil)
        #expect(try Self.modified(path) == Double(Self.content.lastModifiedSecondsSince1970))
        #expect(server.waitUntilIdle())
        #expect(server.requestLog.first?.ifModifiedSince == nil, "nothing to compare with yet")

        let before = server.requestLog.count
        let (inode, modified) = (try Self.inode(path), try Self.modified(path))
        let again = try await BraidCLI.run([server.url("/f"), "-N", "-o", path])
        #expect(again.status == .exited(0), "\(again.standardError)")
        #expect(
            again.standardError.contains("is up to date (not modified on the server since "), "\(again.standardError)")
        #expect(!again.standardError.contains("Saved"), "\(again.standardError)")
        #expect(server.waitUntilIdle())
        let requests = Array(server.requestLog.dropFirst(before))
        #expect(requests.map(\.method) == ["HEAD"], "one conditional request: \(requests)")
        #expect(requests.map(\.status) == [304])
        #expect(requests.first?.ifModifiedSince == Self.content.lastModified)
        #expect(try Self.inode(path) == inode, "not replaced")
        #expect(try Self.modified(path) == modified)
        #expect(try Self.content.firstDifference(fromFileAt: path) == nil)
        #expect(!FileManager.default.fileExists(atPath: path + ".part"))
    }

    @Test("a server that refuses HEAD: the ranged GET carries If-Modified-Since, and its 304 settles it")
    func headRefused() async throws {
        let fixture = try Fixture(.init(content: Self.content, faults: [.refuseHead]))
        defer { fixture.shutdown() }
        let (server, path) = (fixture.server, fixture.path)
        try Self.plant(
            Data("a copy".utf8), at: path, modified: Double(Self.content.lastModifiedSecondsSince1970 + 1))

        let run = try await BraidCLI.run([server.url("/f"), "-N", "-o", path])
        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(run.standardError.contains("is up to date"), "\(run.standardError)")
        #expect(server.waitUntilIdle())
        let log = server.requestLog
        #expect(log.map(\.method) == ["HEAD", "GET"], "\(log)")
        #expect(log.map(\.status) == [405, 304])
        #expect(log.allSatisfy { $0.ifModifiedSince != nil })
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("a copy".utf8))
    }

    @Test("--json says a file left as it was is up to date: a notice, and done with skipped and unmodified")
    func upToDateJSON() async throws {
        let fixture = try Fixture(.init(content: Self.content))
        defer { fixture.shutdown() }
        let (server, path) = (fixture.server, fixture.path)
        let first = try await BraidCLI.run([server.url("/f"), "-q", "-R", "-o", path])
        #expect(first.status == .exited(0), "\(first.standardError)")

        let run = try await BraidCLI.run([server.url("/f"), "-N", "--json", "-o", path])
        #expect(run.status == .exited(0), "\(run.standardError)")
        let events = try JSONEvents(run.standardOutput)
        #expect(events.named("verified").isEmpty, "nothing was verified: \(events.names)")
        #expect(events.named("start").isEmpty, "no transfer started")
        let notices = events.named("notice").compactMap { $0["message"] as? String }
        #expect(notices.contains { $0.contains("is up to date") }, "\(notices)")
        let done = try #require(events.lines.last)
        #expect(done["event"] as? String == "done")
        #expect(done["skipped"] as? Bool == true)
        #expect(done["unmodified"] as? Bool == true)
        #expect(JSONEvents.integer(done["fetched"]) == 0)
        #expect(JSONEvents.integer(done["bytes"]) == Int64(Self.content.size))
    }

    @Test("the server's file is newer: downloaded over the old one, which gets the server's time")
    func serverNewer() async throws {
        let fixture = try Fixture(.init(content: Self.content))
        defer { fixture.shutdown() }
        let (server, path) = (fixture.server, fixture.path)
        let older = Double(Self.content.lastModifiedSecondsSince1970 - 86_400)
        try Self.plant(Data("an old copy".utf8), at: path, modified: older)

        let run = try await BraidCLI.run([server.url("/f"), "-q", "-N", "-n", "4", "-o", path])
        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: path) == nil)
        #expect(try Self.modified(path) == Double(Self.content.lastModifiedSecondsSince1970))
        #expect(server.waitUntilIdle())
        let log = server.requestLog
        #expect(log.first?.method == "HEAD" && log.first?.status == 200, "\(log)")
        #expect(log.first?.ifModifiedSince != nil)
        #expect(log.dropFirst().allSatisfy { $0.ifModifiedSince == nil }, "only the probe is conditional")
        #expect(log.filter { $0.status == 206 }.count > 1, "segmented as usual")
        #expect(!FileManager.default.fileExists(atPath: path + ".part"))
        #expect(!FileManager.default.fileExists(atPath: path + ".braid"))
    }

    @Test(
        "a server that ignores If-Modified-Since: kept when its date is not newer and the length the same, else fetched",
        arguments: [true, false]
    )
    func serverIgnoresConditions(sameLength: Bool) async throws {
        let fixture = try Fixture(.init(content: Self.content, faults: [.ignoreConditionals]))
        defer { fixture.shutdown() }
        let (server, path) = (fixture.server, fixture.path)
        let local = Data(repeating: 0x2A, count: Int(Self.content.size) - (sameLength ? 0 : 1))
        let date = Double(Self.content.lastModifiedSecondsSince1970 + 60)
        try Self.plant(local, at: path, modified: date)

        let run = try await BraidCLI.run([server.url("/f"), "-N", "-o", path])
        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(server.waitUntilIdle())
        if sameLength {
            #expect(run.standardError.contains("is up to date"), "\(run.standardError)")
            #expect(server.requestLog.map(\.status) == [200], "the HEAD alone: \(server.requestLog)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == local)
            #expect(try Self.modified(path) == date)
        } else {
            #expect(try Self.content.firstDifference(fromFileAt: path) == nil)
            #expect(try Self.modified(path) == Double(Self.content.lastModifiedSecondsSince1970))
        }
    }

    @Test("a server with no Last-Modified: downloaded and replaced, and -v says why")
    func noLastModified() async throws {
        let fixture = try Fixture(.init(content: Self.content, faults: [.noLastModified]))
        defer { fixture.shutdown() }
        let (server, path) = (fixture.server, fixture.path)
        let date = Date().timeIntervalSince1970.rounded(.down)
        try Self.plant(Data(repeating: 0x2A, count: Int(Self.content.size)), at: path, modified: date)

        let run = try await BraidCLI.run([server.url("/f"), "-N", "-v", "-o", path])
        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(run.standardError.contains("no Last-Modified"), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: path) == nil)
        #expect(server.waitUntilIdle())
        #expect(server.requestLog.first?.ifModifiedSince != nil)
        #expect(server.requestLog.first?.status == 200)
    }

    @Test("the library: DownloadOptions.timestamping reports a file left as it was as unmodified, fetching nothing")
    func library() async throws {
        let server = TestServer(routes: ["/f": .init(content: Self.content)])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-tstamp")
        defer { directory.remove() }

        let first = await LibraryDownload.run(server.url("/f"), into: directory) { $0.timestamping = true }
        #expect(try first.result.get().unmodified == false)
        #expect(try Self.modified(first.path) == Double(Self.content.lastModifiedSecondsSince1970))
        let again = await LibraryDownload.run(server.url("/f"), into: directory) { $0.timestamping = true }
        let result = try again.result.get()
        #expect(result.unmodified)
        #expect(result.fetchedBytes == 0 && result.bytes == Int64(Self.content.size))
        #expect(!again.events.contains { if case .started = $0 { true } else { false } }, "no transfer")
        #expect(again.notices.contains { $0.contains("is up to date") }, "\(again.notices)")
    }

    @Test("a list with -N: files as new as the server's are skipped as up to date, each after one request")
    func list() async throws {
        let server = TestServer(routes: [
            "/a.bin": .init(size: 100_000, seed: 1), "/b.bin": .init(size: 200_000, seed: 2),
        ])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-tstamp")
        defer { directory.remove() }
        let list = directory.appending("list.txt")
        try Data("\(server.url("/a.bin"))\n\(server.url("/b.bin"))\n".utf8).write(to: list)
        let arguments = ["-i", list.path, "-N", "-d", directory.appending("out").path]

        let first = try await BraidCLI.run(arguments)
        #expect(first.status == .exited(0), "\(first.standardError)")
        #expect(server.waitUntilIdle())
        let before = server.requestLog.count
        let again = try await BraidCLI.run(arguments)
        #expect(again.status == .exited(0), "\(again.standardError)")
        let summary = ListDownloadTests.summaryRows(again.standardError)
        #expect(summary["a.bin"]?.hasPrefix("skipped (up to date)") == true, "\(again.standardError)")
        #expect(summary["b.bin"]?.hasPrefix("skipped (up to date)") == true, "\(again.standardError)")
        #expect(server.waitUntilIdle())
        #expect(server.requestLog.dropFirst(before).map(\.status) == [304, 304])
    }

    @Test("against nginx: after a -R download, -N gets 304 (nginx's exact If-Modified-Since) and fetches nothing")
    func nginx() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-tstamp")
        defer { directory.remove() }
        let root = directory.appending("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try PseudoRandomContent(seed: 9).write(to: root.appendingPathComponent("file.bin"), size: 2 << 20)
        let nginx = try await NginxFixture.start(.init(documentRoot: root))
        defer { nginx.shutdown() }
        let path = directory.appending("file.bin").path

        let first = try await BraidCLI.run([nginx.url("/file.bin"), "-q", "-R", "-o", path])
        #expect(first.status == .exited(0), "\(first.standardError)")
        let served = try Self.modified(root.appendingPathComponent("file.bin").path)?.rounded(.down)
        #expect(try Self.modified(path) == served)
        // The first run's GETs logged (nginx logs a moment after the client has its last byte), so that none is
        // taken for the second run's.
        let before = try await nginx.waitForAccessLog("the first run's GETs") {
            $0.filter { $0.method == "GET" }.reduce(0) { $0 + $1.bodyBytesSent } >= 2 << 20
        }.count

        let again = try await BraidCLI.run([nginx.url("/file.bin"), "-N", "-o", path])
        #expect(again.status == .exited(0), "\(again.standardError)")
        #expect(again.standardError.contains("is up to date"), "\(again.standardError)")
        let log = try await nginx.waitForAccessLog(count: before + 1)
        #expect(log.dropFirst(before).map(\.status) == [304], "\(log)")
        #expect(log.dropFirst(before).map(\.method) == ["HEAD"])

        // The server's file changes: the next -N fetches it and takes its new time.
        try PseudoRandomContent(seed: 10).write(to: root.appendingPathComponent("file.bin"), size: 2 << 20)
        let newer = try #require(served) + 3_600
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: newer)],
            ofItemAtPath: root.appendingPathComponent("file.bin").path)
        let changed = try await BraidCLI.run([nginx.url("/file.bin"), "-q", "-N", "-o", path])
        #expect(changed.status == .exited(0), "\(changed.standardError)")
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: path))
                == Data(contentsOf: root.appendingPathComponent("file.bin")))
        #expect(try Self.modified(path) == newer)
    }
}
