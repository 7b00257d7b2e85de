import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// `braid daemon` driven by clients nobody at Braid wrote: aria2p's API and notification listener, raw JSON-RPC
/// checking aria2's answers detail by detail, a daemon killed with SIGKILL and restarted from its session, and the
/// web page in headless Chromium through Selenium.
///
/// The clients are the Python scripts in `Tests/Daemon`, each run as a child process that exits 0 when every check
/// holds and prints its reason otherwise. They were written against the real aria2 first; set
/// `BRAID_DAEMON_TESTS_TARGET=aria2c` to run them against it again. The file server is the test server, throttled
/// per connection so a download is still receiving bytes when a script pauses it or kills the daemon.
@Suite("braid daemon with aria2's clients", .serialized)
struct DaemonClientTests {
    /// 2 MiB at 128 KiB/s per connection: 16 s over one connection, 8 s over the two the daemon is allowed.
    static let size: UInt64 = 2 << 20
    static let bytesPerSecond = 128 << 10
    static let secret = "braid-\(UInt64.random(in: 0...UInt64.max))"
    /// Two connections per download, so downloads are segmented yet slow (aria2c's default is one).
    static let daemonArguments = ["--max-connections-per-host=2"]

    /// Whether `python3` can import the clients' libraries.
    static func pythonClientsAvailable() async -> Bool {
        let run = try? await ChildProcess.run("python3", ["-c", "import aria2p, selenium, websocket"])
        return run?.status == .exited(0)
    }

    /// Whether the browser test can run here: Chromium and its driver installed, and a page to open (aria2c has
    /// none). In CI (`CI` set) a missing browser fails the test instead of skipping it.
    static let browserTestEnabled: Bool = {
        let installed = ["/usr/bin/chromium", "/usr/bin/chromedriver"].allSatisfy {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        let inCI = ProcessInfo.processInfo.environment["CI"] != nil
        return DaemonUnderTest.Kind.current == .braid && (installed || inCI)
    }()

    @Test("aria2p adds, lists, pauses, resumes and removes downloads and hears every notification for its gid")
    func aria2pClient() async throws {
        try await withFixture(prefix: "braid-daemon-aria2p") { fixture in
            let daemon = try await fixture.startDaemon()
            defer { fixture.expectCleanStop(daemon) }
            try await fixture.runScript("aria2p_client.py", ["--rpc-url", daemon.rpcURL])
        }
    }

    @Test("aria2's answers in the details clients depend on: errors, keys, queue order, notifications, removal")
    func rpcSemantics() async throws {
        try await withFixture(prefix: "braid-daemon-semantics") { fixture in
            let daemon = try await fixture.startDaemon()
            defer { fixture.expectCleanStop(daemon) }
            // Every difference from aria2 in one failure message, not only the first.
            try await fixture.runScript("rpc_semantics.py", ["--rpc-url", daemon.rpcURL, "--keep-going"])
        }
    }

    @Test("after SIGKILL and a restart with the same session, every download is back in its state and finishes")
    func restartAfterKill() async throws {
        try await withFixture(prefix: "braid-daemon-restart") { fixture in
            var arguments = ["--session", fixture.session, "--logs", fixture.directory.appending("logs").path]
            if DaemonUnderTest.Kind.current == .braid {
                arguments += ["--daemon-bin", DaemonUnderTest.braidPath]
            }
            arguments += Self.daemonArguments.map { "--daemon-arg=\($0)" }
            try await fixture.runScript("restart_after_kill.py", arguments)
        }
    }

    @Test(
        "the page in headless Chromium adds a download, pauses, resumes and completes it",
        .enabled(
            if: DaemonClientTests.browserTestEnabled,
            "needs chromium and chromium-driver (scripts/install-deps) and braid's page")
    )
    func pageInBrowser() async throws {
        try await withFixture(prefix: "braid-daemon-page") { fixture in
            let daemon = try await fixture.startDaemon()
            defer { fixture.expectCleanStop(daemon) }
            let screenshot = fixture.directory.appending("page.png").path
            try await fixture.runScript(
                "page_in_browser.py",
                ["--page-url", daemon.baseURL + "/", "--screenshot", screenshot],
                timeout: .seconds(300)
            )
            let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "the screenshot is not a PNG")
        }
    }

    /// Runs `body` with a throttled test server and a scratch directory, and tears both down on every path.
    func withFixture(prefix: String, _ body: (Fixture) async throws -> Void) async throws {
        // scripts/install-deps (run by scripts/test and CI) installs them; without them the test fails, not skips.
        try #require(
            await Self.pythonClientsAvailable(),
            "python3 with aria2p, selenium and websocket-client: scripts/install-deps"
        )
        let server = TestServer(routes: [
            "/file": .init(size: Self.size, seed: 1, faults: [.throttle(bytesPerSecond: Self.bytesPerSecond)])
        ])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: prefix)
        defer { directory.remove() }
        let downloads = directory.appending("downloads").path
        try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
        try await body(Fixture(directory: directory, downloads: downloads, fileURL: server.url("/file")))
    }

    /// One test's scratch directory, file server and the arguments every script shares.
    struct Fixture {
        let directory: TemporaryDirectory
        /// The daemon's `--dir`.
        let downloads: String
        let fileURL: String

        var session: String { directory.appending("session").path }

        func startDaemon() async throws -> DaemonUnderTest {
            try await DaemonUnderTest.start(
                directory: downloads, session: session, secret: DaemonClientTests.secret,
                arguments: DaemonClientTests.daemonArguments
            )
        }

        /// braid's daemon must exit 0 on SIGTERM (aria2c exits 7 with unfinished downloads, so it is not held to it).
        func expectCleanStop(_ daemon: DaemonUnderTest) {
            let status = daemon.stop()
            if daemon.kind == .braid {
                #expect(status == .exited(0), "braid daemon on SIGTERM: \(status)\n\(daemon.child.standardError)")
            }
        }

        /// Runs `Tests/Daemon/NAME` with the shared arguments and `arguments`; expects exit 0, quoting its output.
        func runScript(_ name: String, _ arguments: [String], timeout: Duration = .seconds(240)) async throws {
            let script = DaemonUnderTest.scripts.appendingPathComponent(name).path
            let shared = [
                "--daemon", DaemonUnderTest.Kind.current.rawValue, "--secret", DaemonClientTests.secret,
                "--file-url", fileURL, "--dir", downloads,
            ]
            let run = try await ChildProcess.run("python3", [script] + shared + arguments, timeout: timeout)
            #expect(
                run.status == .exited(0),
                "\(name) \(run.status)\nstdout:\n\(run.standardOutput)\nstderr:\n\(run.standardError)"
            )
        }
    }
}
