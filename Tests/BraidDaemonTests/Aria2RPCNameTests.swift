import Braid
import BraidJSON
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

@testable import BraidDaemon

/// Names a client gives the daemon (`out`, `dir`) or a server gives a download it runs: a name that is not safe as
/// it is gets a one-line refusal and queues nothing, a server's name is made safe, and no directory under the
/// download directory is ever followed out of it, even one swapped for a link after the call was answered.
@Suite("aria2 RPC: hostile names")
struct Aria2RPCNameTests {
    typealias Fixture = Aria2RPCTests.Fixture

    /// A directory beside the download directory that nothing may reach.
    struct Outside {
        let directory: TemporaryDirectory
        init() throws { directory = try TemporaryDirectory(prefix: "braid-daemon-outside") }
        var path: String { directory.url.path }
        var isEmpty: Bool { (try? FileManager.default.contentsOfDirectory(atPath: path).isEmpty) ?? false }
    }

    /// What the download directory holds besides the daemon's session file.
    static func downloaded(_ fixture: Fixture) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: fixture.directory.url.path)
            .filter { !$0.hasPrefix(".braid-session") }.sorted()
    }

    static func add(_ fixture: Fixture, _ options: [(String, JSON)]) async throws -> JSON {
        try await fixture.call("aria2.addUri", [.array([.string(fixture.server.url("/file.bin"))]), .object(options)])
    }

    @Test(
        "an out or a dir that is not a safe name as it is is refused in one printable line, and nothing is queued",
        arguments: [
            ("out", "-rf"), ("out", "invoice\u{202E}fdp.exe"), ("out", "c1\u{85}x"), ("out", "c1\u{9B}31m"),
            ("out", "zero\u{200B}width"), ("out", "line\u{2028}sep"), ("out", "../x"), ("out", "/etc/x"),
            ("out", "sub/-rf"), ("out", "sub/../../x"), ("out", ".braid-session"), ("dir", "-rf"),
            ("dir", "a\u{202E}b"), ("dir", "sub/\u{2029}"),
        ]
    )
    func refused(option: String, value: String) async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }

        let response = try await Self.add(fixture, [(option, .string(value))])

        let (code, message) = Aria2RPCTests.error(response)
        #expect(code == 1, "\(response.text)")
        #expect(message?.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) } == false)
        #expect(message?.unicodeScalars.contains { $0.properties.generalCategory == .format } == false)
        #expect(message?.unicodeScalars.contains { $0 == "\u{2028}" || $0 == "\u{2029}" } == false)
        let stat = try await fixture.result("aria2.getGlobalStat")
        #expect(stat["numActive"] == .string("0") && stat["numWaiting"] == .string("0"))
        #expect(try Self.downloaded(fixture).isEmpty)
    }

    @Test("an out through a link inside the download directory is refused, and nothing is written where it points")
    func outThroughLink() async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        let outside = try Outside()
        defer { outside.directory.remove() }
        try FileManager.default.createSymbolicLink(
            atPath: fixture.directory.appending("sub").path, withDestinationPath: outside.path)

        let response = try await Self.add(fixture, [("out", .string("sub/x.bin"))])

        #expect(Aria2RPCTests.error(response).1?.contains("is a symbolic link") == true, "\(response.text)")
        #expect(outside.isEmpty)
    }

    @Test("a directory swapped for a link after the call was answered fails the download and writes nothing outside")
    func swappedAfterAdding() async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        let outside = try Outside()
        defer { outside.directory.remove() }
        let response = try await Self.add(fixture, [("out", .string("sub/x.bin")), ("pause", .string("true"))])
        let gid = try #require(response["result"]?.stringValue, "\(response.text)")
        let sub = fixture.directory.appending("sub").path
        #expect(FileManager.default.fileExists(atPath: sub), "the directory is made when the call is answered")

        try FileManager.default.removeItem(atPath: sub)
        try FileManager.default.createSymbolicLink(atPath: sub, withDestinationPath: outside.path)
        #expect(try await fixture.result("aria2.unpause", [.string(gid)]) == .string(gid))

        let status = try await fixture.waitForStatus(gid) { $0["status"] == .string("error") }
        #expect(status["errorMessage"]?.stringValue?.contains("is a symbolic link") == true, "\(status.text)")
        #expect(outside.isEmpty)
    }

    @Test(
        "an out a removed download had is free for the next add once its files are gone, as aria2p's remove leaves it")
    func outFreedWhenRemoved() async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        let slow = TestServer.Route(
            content: TestContent(seed: 78, size: 3 << 20), faults: [.throttle(bytesPerSecond: 64 << 10)])
        fixture.server.setRoute("/slow.bin", slow)

        let first = try await fixture.result(
            "aria2.addUri", [.array([.string(fixture.server.url("/slow.bin"))]), .object([("out", .string("n.bin"))])])
        let gid = try #require(first.stringValue)
        _ = try await fixture.waitForStatus(gid) { ($0["completedLength"]?.stringValue).flatMap { Int($0) } ?? 0 > 0 }
        _ = try await fixture.result("aria2.remove", [.string(gid)])
        _ = try await fixture.waitForStatus(gid) { $0["status"] == .string("removed") }
        // Its result can be removed once its transfer has ended, as aria2p's remove(clean=True) asks; and its partial
        // files removed, as remove(files=True) does, which another URL's download would otherwise refuse as another
        // download's.
        let deadline = ContinuousClock.now + .seconds(60)
        while try await fixture.call("aria2.removeDownloadResult", [.string(gid)])["result"] == nil {
            guard ContinuousClock.now < deadline else { Issue.record("the removed download never ended"); return }
            try await Task.sleep(for: .milliseconds(20))
        }
        for leftover in ["n.bin.part", "n.bin.braid"] {
            try? FileManager.default.removeItem(atPath: fixture.directory.appending(leftover).path)
        }

        let added = try await Self.add(fixture, [("out", .string("n.bin"))])
        let next = try #require(added["result"]?.stringValue, "\(added.text)")
        let done = try await fixture.waitForStatus(next) {
            $0["status"] != .string("active") && $0["status"] != .string("waiting")
        }
        #expect(done["status"] == .string("complete"), "\(done.text)")
        #expect(try Aria2RPCTests.content.firstDifference(fromFileAt: fixture.directory.appending("n.bin").path) == nil)
    }

    @Test("a server's hostile name for a download without out is made safe inside the directory")
    func serverName() async throws {
        let fixture = try Fixture(faults: [.contentDisposition("attachment; filename*=UTF-8''..%2F%E2%80%AE-rf%C2%85")])
        defer { Task { await fixture.stop() } }

        let response = try await Self.add(fixture, [("dir", .string("sub"))])
        let gid = try #require(response["result"]?.stringValue, "\(response.text)")

        let status = try await fixture.waitForStatus(gid) { $0["status"] == .string("complete") }
        let path = fixture.directory.appending("sub/_-rf_").path
        #expect(status["files"]?.arrayValue?.first?["path"] == .string(path), "\(status.text)")
        #expect(try Aria2RPCTests.content.firstDifference(fromFileAt: path) == nil)
    }
}
