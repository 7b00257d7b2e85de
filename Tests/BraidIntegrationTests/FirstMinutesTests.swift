import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// What a newcomer meets first: destinations that do not exist yet, typos in URLs, servers that are not there.
@Suite("the first ten minutes")
struct FirstMinutesTests {
    struct Fixture {
        let server: TestServer
        let directory: TemporaryDirectory
        let content = TestContent(seed: 5, size: 200_000)

        init() throws {
            server = TestServer(routes: ["/f.bin": .init(content: content)])
            try server.start()
            directory = try TemporaryDirectory(prefix: "braid-first")
        }

        var url: String { server.url("/f.bin") }

        func path(_ name: String) -> String { directory.appending(name).path }

        func shutdown() {
            server.shutdown()
            directory.remove()
        }
    }

    @Test("-d and -o create the directories they name, as aria2c -d and wget -P do")
    func createsMissingDirectories() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }

        let intoDirectory = try await BraidCLI.run([fixture.url, "-q", "-d", fixture.path("a/b/c")])
        #expect(intoDirectory.status == .exited(0), "\(intoDirectory.standardError)")
        #expect(try fixture.content.firstDifference(fromFileAt: fixture.path("a/b/c/f.bin")) == nil)

        let asFile = try await BraidCLI.run([fixture.url, "-q", "-o", fixture.path("x/y/z.bin")])
        #expect(asFile.status == .exited(0), "\(asFile.standardError)")
        #expect(try fixture.content.firstDifference(fromFileAt: fixture.path("x/y/z.bin")) == nil)
    }

    @Test("a directory that cannot be created fails before any traffic, said once even for a list")
    func uncreatableDirectory() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        try Data("not a directory".utf8).write(to: fixture.directory.appending("plain"))
        let list = fixture.path("list.txt")
        try Data("\(fixture.url)\n\(fixture.url)?again\n".utf8).write(to: URL(fileURLWithPath: list))

        let single = try await BraidCLI.run([fixture.url, "-d", fixture.path("plain/sub")])
        #expect(single.status == .exited(3))
        #expect(single.standardError.contains("plain/sub"))
        #expect(single.standardError.contains("Not a directory") || single.standardError.contains("not a directory"))

        let listed = try await BraidCLI.run(["-i", list, "-d", fixture.path("plain/sub")])
        #expect(listed.status == .exited(3))
        let mentions = listed.standardError.components(separatedBy: "plain/sub").count - 1
        #expect(mentions == 1, "the error once, not once per file and again in the summary:\n\(listed.standardError)")
        #expect(fixture.server.requestLog.isEmpty, "nothing was fetched")
    }

    @Test("-o naming an existing directory is refused before any traffic, with or without --force")
    func outputIsADirectory() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        try FileManager.default.createDirectory(atPath: fixture.path("existing"), withIntermediateDirectories: true)

        for extra in [[], ["--force"]] {
            let run = try await BraidCLI.run([fixture.url, "-o", fixture.path("existing")] + extra)
            #expect(run.status == .exited(2), "\(run.standardError)")
            #expect(run.standardError.contains("is a directory; use -d to save into it"), "\(run.standardError)")
        }
        #expect(fixture.server.requestLog.isEmpty, "refused before any traffic")
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.path("existing")).isEmpty)
    }

    @Test(
        "a URL without a scheme is refused with the URL it most likely meant",
        arguments: [
            ("example.com/file.iso", "did you mean 'http://example.com/file.iso'?"),
            ("localhost:8080/f", "did you mean 'http://localhost:8080/f'?"),
            ("ftp://example.com/f", "only http and https URLs are supported, got 'ftp:'"),
        ])
    func urlWithoutScheme(url: String, expected: String) async throws {
        let run = try await BraidCLI.run([url, "-o", "/tmp/braid-never-written"])
        #expect(run.status == .exited(2))
        #expect(run.standardError.contains(expected), "\(run.standardError)")
    }

    @Test("a host name that does not resolve fails at once, without retries")
    func unknownHostFailsAtOnce() async throws {
        // A label of 64 characters is longer than DNS allows: the resolver refuses the name on this machine,
        // without sending a query anywhere (checked with strace), so the test stays on loopback.
        let host = String(repeating: "a", count: 64) + ".invalid"
        let run = try await BraidCLI.run(["http://\(host)/file", "-o", "/tmp/braid-never-written"])
        #expect(run.status == .exited(4), "\(run.standardError)")
        #expect(!run.standardError.contains("retrying"), "\(run.standardError)")
        #expect(run.standardError.lowercased().contains("resolve"), "\(run.standardError)")
    }

    @Test("a refused first connection is retried once, then fails")
    func refusedFirstConnection() async throws {
        // Held, not just picked free: a parallel test's server that took a freed port answered 404 here once.
        let refusing = try RefusingPort()
        defer { refusing.close() }
        let run = try await BraidCLI.run(
            ["http://127.0.0.1:\(refusing.port)/file", "-o", "/tmp/braid-never-written"])
        #expect(run.status == .exited(4), "\(run.standardError)")
        let retries = run.standardError.components(separatedBy: "retrying").count - 1
        #expect(retries == 1, "\(run.standardError)")
        #expect(run.standardError.contains("gave up after 2 attempts"), "\(run.standardError)")
    }
}
