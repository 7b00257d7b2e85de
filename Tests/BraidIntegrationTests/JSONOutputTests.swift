import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// `--json`: stdout becomes newline-delimited JSON events a program can follow line by line, and stderr carries
/// nothing but errors.
@Suite("braid --json: machine-readable progress")
struct JSONOutputTests {
    static let content = TestContent(seed: 21, size: 2 << 20)

    static func start(_ routes: [String: TestServer.Route]) throws -> (TestServer, TemporaryDirectory) {
        let server = TestServer(routes: routes)
        try server.start()
        return (server, try TemporaryDirectory(prefix: "braid-json"))
    }

    @Test("a throttled download: start, progress about once a second, verified, and done as the last line")
    func singleDownload() async throws {
        let (server, directory) = try Self.start([
            "/f.bin": .init(content: Self.content, faults: [.throttle(bytesPerSecond: 512 << 10)])
        ])
        defer {
            server.shutdown()
            directory.remove()
        }
        let output = directory.appending("f.bin").path

        let run = try await BraidCLI.run([
            server.url("/f.bin"), "-o", output, "-n", "2", "--json", "--no-fsync",
            "--checksum", "sha-256=\(Self.content.hexDigest(.sha256))",
        ])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(run.standardError.isEmpty, "nothing but errors on stderr: \(run.standardError)")
        let events = try JSONEvents(run.standardOutput)
        #expect(events.names.suffix(2) == ["verified", "done"], "\(events.names)")
        #expect(
            events.lines.allSatisfy {
                JSONEvents.integer($0["id"]) == 1 && $0["url"] as? String == server.url("/f.bin")
            })

        let start = try #require(events.named("start").first)
        #expect(start["path"] as? String == output)
        #expect(JSONEvents.integer(start["total"]) == Int64(Self.content.size))
        #expect(JSONEvents.integer(start["resumed"]) == 0)

        let progress = events.named("progress")
        #expect(progress.count >= 2, "a download of about 2 s reports progress more than once")
        let times = progress.compactMap { JSONEvents.number($0["time"]) }
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= 0.9 }, "about once a second: \(times)")
        for line in progress {
            #expect(JSONEvents.integer(line["total"]) == Int64(Self.content.size))
            #expect(JSONEvents.integer(line["downloaded"]) != nil && JSONEvents.integer(line["speed"]) != nil)
            #expect(line.keys.contains("eta") && JSONEvents.integer(line["connections"]) != nil)
            let segments = try #require(line["segments"] as? [[String: Any]])
            #expect(!segments.isEmpty)
            #expect(segments.allSatisfy { $0["active"] is Bool && JSONEvents.integer($0["done"]) != nil })
        }
        let downloaded = progress.compactMap { JSONEvents.integer($0["downloaded"]) }
        #expect(downloaded == downloaded.sorted(), "bytes done only grow")

        let verified = try #require(events.named("verified").first)
        #expect(verified["algorithm"] as? String == "sha-256")
        #expect(verified["hex"] as? String == Self.content.hexDigest(.sha256))
        let done = try #require(events.lines.last)
        #expect(JSONEvents.integer(done["bytes"]) == Int64(Self.content.size))
        #expect(done["path"] as? String == output)
        #expect(done["skipped"] as? Bool == false)
        #expect(try Self.content.firstDifference(fromFileAt: output) == nil)
        let states = events.named("state").compactMap { $0["state"] as? String }
        #expect(states == ["probing", "downloading", "verifying", "completed"])
    }

    @Test("a failing download ends with an error event carrying the code, exit status and HTTP status")
    func singleFailure() async throws {
        let (server, directory) = try Self.start(["/gone": .init(size: 100, faults: [.status(404, retryAfter: nil)])])
        defer {
            server.shutdown()
            directory.remove()
        }

        let run = try await BraidCLI.run([server.url("/gone"), "-d", directory.url.path, "--json"])

        #expect(run.status == .exited(5), "\(run.standardError)")
        let events = try JSONEvents(run.standardOutput)
        let error = try #require(events.lines.last)
        #expect(error["event"] as? String == "error")
        #expect(error["code"] as? String == "protocolViolation")
        #expect(JSONEvents.integer(error["exit"]) == 5)
        #expect(JSONEvents.integer(error["http"]) == 404)
        #expect((error["message"] as? String)?.contains("404") == true)
        #expect(run.standardError.split(separator: "\n").count == 1, "one error line: \(run.standardError)")
        #expect(events.named("done").isEmpty && events.named("verified").isEmpty)
    }

    @Test("a list: per-download events with ids, an error event for the failure, a summary as the last line")
    func list() async throws {
        let small = TestContent(seed: 22, size: 256 << 10)
        let (server, directory) = try Self.start([
            "/good.bin": .init(content: small),
            "/missing.bin": .init(size: 100, faults: [.status(404, retryAfter: nil)]),
        ])
        defer {
            server.shutdown()
            directory.remove()
        }
        // A directory name that needs escaping in JSON: quotes, a backslash, a tab and a non-ASCII letter.
        let target = directory.appending("out \"quoted\" \\ tab\there é")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        let list = directory.appending("list.txt")
        try Data("\(server.url("/good.bin"))\n\(server.url("/missing.bin"))\n".utf8).write(to: list)

        let run = try await BraidCLI.run(["-i", list.path, "-d", target.path, "--json", "--no-fsync"])

        #expect(run.status == .exited(5), "\(run.standardError)")
        let events = try JSONEvents(run.standardOutput)
        #expect(events.names.last == "summary")
        #expect(events.named("state").filter { $0["state"] as? String == "queued" }.count == 2)
        let done = try #require(events.named("done", id: 1).first)
        #expect(done["path"] as? String == target.appendingPathComponent("good.bin").path, "escaped and decoded back")
        #expect(try small.firstDifference(fromFileAt: target.appendingPathComponent("good.bin").path) == nil)
        let error = try #require(events.named("error", id: 2).first)
        #expect(error["code"] as? String == "protocolViolation")
        #expect(events.about(2).last?["event"] as? String == "error", "a download's last line is its error")
        #expect(events.about(1).suffix(2).map { $0["event"] as? String } == ["verified", "done"])

        let summary = try #require(events.lines.last)
        #expect(JSONEvents.integer(summary["exit"]) == 5)
        #expect(JSONEvents.integer(summary["succeeded"]) == 1 && JSONEvents.integer(summary["failed"]) == 1)
        let files = try #require(summary["files"] as? [[String: Any]])
        #expect(files.map { $0["outcome"] as? String } == ["completed", "failed"])
        #expect(files.last?["code"] as? String == "protocolViolation")
        #expect(!run.standardError.contains("{"), "stderr has the error line only: \(run.standardError)")
    }

    @Test("a malformed list under --json ends with an error event naming the line, exit 2")
    func malformedList() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-json")
        defer { directory.remove() }
        let list = directory.appending("list.txt")
        try Data("http://127.0.0.1:9/a\n  colour=blue\n".utf8).write(to: list)

        let run = try await BraidCLI.run(["-i", list.path, "-d", directory.url.path, "--json"])

        #expect(run.status == .exited(2), "\(run.standardError)")
        let events = try JSONEvents(run.standardOutput)
        #expect(events.names == ["error"])
        #expect(events.lines.first?["code"] as? String == "usage")
        #expect((events.lines.first?["message"] as? String)?.hasPrefix("line 2:") == true)
    }
}
