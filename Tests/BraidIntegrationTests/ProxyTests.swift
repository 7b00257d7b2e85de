import Braid
import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Downloads through real proxies on loopback, in front of nginx: tinyproxy (HTTP) and microsocks (SOCKS5). The
/// proxy's own log shows every segment went through it; a proxy that refuses or dies fails with exit 4 and leaves
/// a download that resumes; proxy credentials appear nowhere.
@Suite("Proxies", .serialized)
struct ProxyTests {
    static let size = 8 << 20
    static let credentials = (user: "braiduser", password: "s3cret-proxy-pw")

    struct Fixture {
        let nginx: NginxFixture
        let directory: TemporaryDirectory
        let md5: MD5Digest

        /// nginx serving one file at `/file.bin`, and throttled to 512 KiB/s per connection at `/slow/file.bin`.
        static func start() async throws -> Fixture {
            let directory = try TemporaryDirectory(prefix: "braid-proxy-test")
            let root = directory.appending("www")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try PseudoRandomContent(seed: 17).write(to: root.appendingPathComponent("file.bin"), size: size)
            let md5 = try await MD5Digest.of(fileAt: root.appendingPathComponent("file.bin"))
            let nginx = try await NginxFixture.start(
                .init(documentRoot: root, locations: [.prefix("/slow/", bytesPerSecond: 512 << 10)])
            )
            return Fixture(nginx: nginx, directory: directory, md5: md5)
        }

        func shutdown() {
            nginx.shutdown()
            directory.remove()
        }

        /// The requests nginx logged for `path`.
        func requests(for path: String, atLeast count: Int) async throws -> [NginxFixture.AccessLogEntry] {
            try await nginx.waitForAccessLog(count: count).filter { $0.path == path }
        }
    }

    /// The environment of this process without any proxy variable, so the host's settings cannot interfere.
    static func environment(adding extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
        environment.merge(extra) { _, new in new }
        return environment
    }

    static func braid(_ arguments: [String], environment: [String: String] = environment()) async throws
        -> ChildProcess.Completed
    {
        try await ChildProcess.run(BraidCLI.path, arguments, environment: environment, timeout: .seconds(120))
    }

    @Test("through tinyproxy: every segment's request is in the proxy's log, and the file is identical")
    func httpProxy() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let proxy = try await ProxyFixture.start(.http)
        defer { proxy.shutdown() }
        let output = fixture.directory.appending("out.bin")

        let run = try await Self.braid([
            fixture.nginx.url("/file.bin"), "-o", output.path, "-n", "4", "--proxy", proxy.url(), "-v",
        ])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try await MD5Digest.of(fileAt: output) == fixture.md5)
        #expect(run.standardError.contains("proxy \(proxy.url()) (set explicitly)"), "\(run.standardError)")
        // One request a connection at least: the first GET (bytes=0-) may keep a whole share.
        let served = try await fixture.requests(for: "/file.bin", atLeast: 4)
        let ranged = served.filter { $0.range != nil }
        #expect(ranged.count >= 4, "\(served)")
        let forwarded = proxy.forwarded().filter { $0.contains(fixture.nginx.url("/file.bin")) }
        #expect(forwarded.count >= served.count, "proxy forwarded \(forwarded), nginx served \(served.count)")
    }

    @Test("through microsocks with credentials (socks5h): the proxy connected every segment; without them, exit 4")
    func socksProxyWithCredentials() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let proxy = try await ProxyFixture.start(.socks5(credentials: Self.credentials))
        defer { proxy.shutdown() }
        let output = fixture.directory.appending("out.bin")
        let url = fixture.nginx.url("/file.bin")

        let refused = try await Self.braid([url, "-o", output.path, "--proxy", proxy.url(), "--max-tries", "2"])
        #expect(refused.status == .exited(4), "\(refused.standardError)")
        #expect(proxy.forwarded().isEmpty, "\(proxy.log)")

        let proxyURL = proxy.url(credentials: Self.credentials)
        let run = try await Self.braid([url, "-o", output.path, "-n", "4", "--proxy", proxyURL, "-v", "--force"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try await MD5Digest.of(fileAt: output) == fixture.md5)
        #expect(run.standardError.contains("proxy socks5h://braiduser:***@127.0.0.1:\(proxy.port) (set explicitly)"))
        #expect(!run.standardError.contains(Self.credentials.password))
        let served = try await fixture.requests(for: "/file.bin", atLeast: 4)
        let connections = proxy.forwarded().filter { $0 == "127.0.0.1:\(fixture.nginx.port)" }
        #expect(connections.count >= Set(served.map(\.connection)).count, "\(proxy.log)")
        #expect(served.filter { $0.range != nil }.count >= 4)
    }

    @Test("http_proxy in the environment is used and named by -v; --proxy '' goes direct")
    func environmentProxy() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let proxy = try await ProxyFixture.start(.http)
        defer { proxy.shutdown() }
        let output = fixture.directory.appending("out.bin")
        let environment = Self.environment(adding: ["http_proxy": proxy.url()])

        let viaEnvironment = try await Self.braid(
            [fixture.nginx.url("/file.bin"), "-o", output.path, "-n", "2", "-v"], environment: environment)
        #expect(viaEnvironment.status == .exited(0), "\(viaEnvironment.standardError)")
        #expect(viaEnvironment.standardError.contains("proxy \(proxy.url()) (from http_proxy)"))
        // The first GET and at least one range request of the second connection: how many more depends on how the
        // pieces were sized, which the first bytes' timing decides (the first GET, bytes=0-, may keep a whole share).
        let throughProxy = proxy.forwarded().count
        #expect(throughProxy >= 2, "\(proxy.log)")

        let direct = try await Self.braid(
            [fixture.nginx.url("/file.bin"), "-o", output.path, "-n", "2", "-v", "--force", "--proxy", ""],
            environment: environment
        )
        #expect(direct.status == .exited(0), "\(direct.standardError)")
        #expect(direct.standardError.contains("no proxy (set explicitly as empty)"), "\(direct.standardError)")
        #expect(proxy.forwarded().count == throughProxy)
        #expect(try await MD5Digest.of(fileAt: output) == fixture.md5)
    }

    @Test("a list's proxy= sends that entry alone through the proxy")
    func listProxy() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let proxy = try await ProxyFixture.start(.http)
        defer { proxy.shutdown() }
        let list = fixture.directory.appending("list.txt")
        let text = """
            \(fixture.nginx.url("/file.bin"))
              out=proxied.bin
              proxy=\(proxy.url())
            \(fixture.nginx.url("/file.bin?direct"))
              out=direct.bin

            """
        try text.write(to: list, atomically: true, encoding: .utf8)
        let directory = fixture.directory.appending("list-out")

        let run = try await Self.braid(["-i", list.path, "-d", directory.path, "-q"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        for name in ["proxied.bin", "direct.bin"] {
            #expect(try await MD5Digest.of(fileAt: directory.appendingPathComponent(name)) == fixture.md5)
        }
        let forwarded = proxy.forwarded()
        #expect(!forwarded.isEmpty)
        #expect(forwarded.allSatisfy { !$0.contains("direct") }, "\(forwarded)")
    }

    @Test("a proxy that refuses connections gives exit 4")
    func refusingProxy() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let refusing = try RefusingPort()
        defer { refusing.close() }
        let closedPort = refusing.port
        let output = fixture.directory.appending("out.bin")

        let run = try await Self.braid([
            fixture.nginx.url("/file.bin"), "-o", output.path, "--proxy", "http://127.0.0.1:\(closedPort)",
        ])

        #expect(run.status == .exited(4), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test("a proxy that dies mid-way gives exit 4, and the download resumes without it; credentials stored nowhere")
    func proxyDiesMidway() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let proxy = try await ProxyFixture.start(.http)
        defer { proxy.shutdown() }
        let output = fixture.directory.appending("out.bin")
        let manifest = output.path + ".braid"
        let url = fixture.nginx.url("/slow/file.bin")
        let proxyURL = proxy.url(credentials: Self.credentials)

        let child = try ChildProcess(
            BraidCLI.path,
            [url, "-o", output.path, "-n", "4", "--proxy", proxyURL, "--max-tries", "2", "-v", "--json"],
            environment: Self.environment()
        )
        try await child.waitUntil("a manifest and segments through the proxy", timeout: .seconds(30)) {
            FileManager.default.fileExists(atPath: manifest) && proxy.forwarded().count >= 4
                && (ManifestFile(at: URL(fileURLWithPath: manifest))?.done ?? 0) > 0
        }
        proxy.kill()
        let status = try await child.waitForExit(timeout: .seconds(60))

        #expect(status == .exited(4), "\(child.standardError)")
        #expect(FileManager.default.fileExists(atPath: manifest))
        let stored = try String(contentsOfFile: manifest, encoding: .utf8)
        for text in [stored, child.standardOutput, child.standardError] {
            #expect(!text.contains(Self.credentials.password))
        }
        #expect(child.standardError.contains("braiduser:***@"), "\(child.standardError)")

        let resumed = try await Self.braid([url, "-o", output.path, "-n", "4"])
        #expect(resumed.status == .exited(0), "\(resumed.standardError)")
        #expect(try await MD5Digest.of(fileAt: output) == fixture.md5)
        #expect(!FileManager.default.fileExists(atPath: manifest))
        #expect(resumed.standardError.contains("resuming at"), "\(resumed.standardError)")
    }

    @Test("the library: DownloadOptions.proxy sends every segment through the proxy; a bad one names the option")
    func library() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let proxy = try await ProxyFixture.start(.socks5(credentials: nil))
        defer { proxy.shutdown() }

        let download = await LibraryDownload.run(fixture.nginx.url("/file.bin"), into: fixture.directory) {
            $0.proxy = proxy.url(scheme: "socks5")
        }

        #expect(download.error == nil, "\(String(describing: download.error))")
        #expect(try await MD5Digest.of(fileAt: URL(fileURLWithPath: download.path)) == fixture.md5)
        let served = try await fixture.requests(for: "/file.bin", atLeast: 4)
        // microsocks logs connections, and each carries several requests: nginx's connections for the file are
        // no more than the ones the proxy opened.
        #expect(proxy.forwarded().count >= Set(served.map(\.connection)).count, "\(proxy.log)")

        let refused = await LibraryDownload.run(fixture.nginx.url("/file.bin"), into: fixture.directory, name: "b") {
            $0.proxy = "socks4://user:secret@127.0.0.1:\(proxy.port)"
        }
        #expect(refused.error?.code == .usage)
        #expect(refused.error?.option == .proxy)
        #expect(refused.error?.message.contains("secret") == false)
    }
}
