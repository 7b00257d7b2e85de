import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// A list's download that may come in one request starts on its lane's pool thread (`PooledStart`), its first GET
/// run there with no thread waiting for it. What that GET meets (a redirect, a file too long to read whole) goes on
/// from where it got to: no request is made twice.
@Suite("a list's download started on the pool's thread", .serialized)
struct PooledStartTests {
    static let small = TestContent(seed: 71, size: 100 << 10)
    static let large = TestContent(seed: 72, size: 3 << 20)

    @Test("a small file, a redirected one and a larger one in one list: the right bytes, and no request made twice")
    func eachRequestOnce() async throws {
        let server = TestServer(routes: [
            "/small": .init(content: Self.small),
            "/moved": .init(content: Self.small, faults: [.redirect(status: 302, to: .path("/target"))]),
            "/target": .init(content: Self.small),
            "/large": .init(content: Self.large),
        ])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-pooled")
        defer { directory.remove() }
        let manager = DownloadManager()
        let names = ["/small": "small.bin", "/moved": "moved.bin", "/large": "large.bin"]
        let downloads = names.keys.sorted().map { path in
            var options = DownloadOptions()
            options.destination = .file(directory.appending(names[path]!).path)
            options.syncOnCompletion = false
            return manager.makeDownload(url: server.url(path), options: options)
        }

        for outcome in await manager.run(downloads) {
            if case let .failure(error) = outcome { Issue.record("\(error)") }
        }
        let expected = [
            "small.bin": Self.small.bytes(in: 0..<Self.small.size),
            "moved.bin": Self.small.bytes(in: 0..<Self.small.size),
            "large.bin": Self.large.bytes(in: 0..<Self.large.size),
        ]
        for (name, bytes) in expected {
            #expect(FileManager.default.contents(atPath: directory.appending(name).path) == Data(bytes), "\(name)")
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == expected.keys.sorted())
        #expect(server.waitUntilIdle())
        let log = server.requestLog
        let shown = log.map { "\($0.method) \($0.target) \($0.range ?? "-") \($0.status)" }
        let count = { (target: String) in log.filter { $0.target == target }.count }
        // One GET each for the small file, the redirect and its target.
        #expect(count("/small") == 1 && count("/moved") == 1 && count("/target") == 1, "\(shown)")
        // The larger file's first GET is its transfer's first request: nothing asks for its first bytes again.
        let fromStart = log.filter { $0.target == "/large" && ($0.range ?? "").hasPrefix("bytes=0-") }
        #expect(fromStart.count == 1, "\(shown)")
        #expect(log.allSatisfy { $0.method == "GET" }, "\(shown)")
    }

    @Test(
        "many downloads into one directory: what was there before is seen, and so is what an earlier one wrote"
    )
    func namesAlreadyThere() async throws {
        let count = 20
        let contents = (0..<count).map { TestContent(seed: 100 + UInt64($0), size: 16 << 10) }
        var routes: [String: TestServer.Route] = [:]
        for (index, content) in contents.enumerated() { routes["/f\(index)"] = .init(content: content) }
        let server = TestServer(routes: routes)
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-listed")
        defer { directory.remove() }
        let bytes = { (index: Int) in Data(contents[index].bytes(in: 0..<contents[index].size)) }
        // Well past the looks after which the manager lists the directory instead of looking names up.
        let complete = 14
        let short = 15
        FileManager.default.createFile(atPath: directory.appending("f\(complete)").path, contents: bytes(complete))
        FileManager.default.createFile(
            atPath: directory.appending("f\(short)").path, contents: bytes(short).prefix(100))
        let manager = DownloadManager(limits: .init(concurrentDownloads: .fixed(1)))
        var options = DownloadOptions()
        options.destination = .directory(directory.url.path)
        options.syncOnCompletion = false
        // As a list run from the command line: a file already complete is verified in place and skipped.
        options.skipExistingIfVerified = true
        // The twelfth file again, once the first has written it: its name was free when the directory was listed.
        let again = 12
        let downloads = ((0..<count).map { "/f\($0)" } + ["/f\(again)"]).map { path in
            manager.makeDownload(url: server.url(path), options: options)
        }

        let outcomes = await manager.run(downloads)

        for (index, outcome) in outcomes.enumerated() where index != short {
            if case let .failure(error) = outcome { Issue.record("download \(index): \(error)") }
        }
        guard case let .failure(error) = outcomes[short] else {
            Issue.record("the short file already there was replaced")
            return
        }
        #expect(error.message.contains("exists with 100 bytes"), "\(error.message)")
        #expect(FileManager.default.contents(atPath: directory.appending("f\(short)").path) == bytes(short).prefix(100))
        for index in 0..<count where index != short {
            #expect(FileManager.default.contents(atPath: directory.appending("f\(index)").path) == bytes(index))
        }
        // The file already complete, and the twelfth file's second download, are not fetched whole again.
        #expect(server.waitUntilIdle())
        let gets = { (target: String) in server.requestLog.filter { $0.target == target && $0.method == "GET" }.count }
        #expect(gets("/f\(complete)") == 0 && gets("/f\(again)") == 1, "\(server.requestLog.map(\.target))")
    }
}
