import BraidTestSupport
import Foundation
import Testing

/// `braid daemon` as a user starts it: what it refuses before listening, each with one line and an exit status,
/// and a clean stop on SIGTERM that leaves the session saved. (The daemon driven by real aria2 clients is
/// `DaemonClientTests`'.)
@Suite("braid daemon command")
struct DaemonCommandTests {
    @Test(
        "refused before listening: another address without a secret, a bad address, a missing directory",
        arguments: [
            (["--listen", "0.0.0.0:0"], "needs --rpc-secret"),
            (["--listen", "127.evil.example:0"], "needs --rpc-secret"),
            (["--listen", "localhost"], "expected HOST:PORT"),
            (["--listen", "127.0.0.1:70000"], "expected HOST:PORT"),
            (["--dir", "/nonexistent/braid"], "is not a directory"),
            (["-j", "0"], "downloads at once"),
        ]
    )
    func refusals(arguments: [String], message: String) async throws {
        let directory = try TemporaryDirectory(prefix: "braid-daemon-cli")
        defer { directory.remove() }
        let run = try await BraidCLI.run(["daemon", "--dir", directory.url.path] + arguments, timeout: .seconds(30))
        #expect(run.status == .exited(2))
        #expect(run.standardError.contains(message), "\(run.standardError)")
        #expect(run.standardOutput.isEmpty)
    }

    @Test("a session file that is not Braid's stops the daemon with exit 7, and the file is left as it was")
    func foreignSession() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-daemon-cli")
        defer { directory.remove() }
        let session = directory.appending("aria2.session")
        try Data("http://example.org/a\n  dir=/tmp\n".utf8).write(to: session)
        let run = try await BraidCLI.run(
            ["daemon", "--dir", directory.url.path, "--listen", "127.0.0.1:0", "--session", session.path],
            timeout: .seconds(30)
        )
        #expect(run.status == .exited(7))
        #expect(run.standardError.contains("is not a Braid daemon session"), "\(run.standardError)")
        #expect(try Data(contentsOf: session) == Data("http://example.org/a\n  dir=/tmp\n".utf8))
    }

    @Test(
        "it prints where it listens, answers on loopback, and on SIGTERM saves the session in -d DIR and exits 0",
        arguments: ["--dir", "-d"]
    )
    func startAndStop(directoryFlag: String) async throws {
        let directory = try TemporaryDirectory(prefix: "braid-daemon-cli")
        defer { directory.remove() }
        let daemon = try BraidCLI.start(["daemon", directoryFlag, directory.url.path, "--listen", "127.0.0.1:0"])
        defer { _ = daemon.stop(signal: SIGKILL) }
        try await daemon.waitUntilStandardOutput(contains: "/\n", timeout: .seconds(60))
        let line = daemon.standardOutput.split(separator: "\n").first.map(String.init) ?? ""
        #expect(line.hasPrefix("braid daemon listening on http://127.0.0.1:"))
        let url = String(line.dropFirst("braid daemon listening on ".count)) + "jsonrpc"
        let answer = try await ChildProcess.run(
            "curl", ["-s", "-d", #"{"jsonrpc":"2.0","id":1,"method":"aria2.getGlobalStat"}"#, url],
            timeout: .seconds(30)
        )
        #expect(answer.standardOutput.contains(#""numActive":"0""#), "\(answer.standardOutput)")
        daemon.send(SIGTERM)
        #expect(try await daemon.waitForExit(timeout: .seconds(60)) == .exited(0))
        let session = try String(contentsOf: directory.appending(".braid-session"), encoding: .utf8)
        #expect(session.contains(#""format":"braid-daemon-session""#))
    }

    @Test("-q prints nothing while it serves, not even the address it listens on")
    func quiet() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-daemon-cli")
        defer { directory.remove() }
        // A port picked free may be taken before the daemon binds it (exit 3): then another is tried.
        for _ in 0..<3 {
            let port = try FreePort.pick()
            let daemon = try BraidCLI.start(["daemon", "-q", "-d", directory.url.path, "--listen", "127.0.0.1:\(port)"])
            defer { _ = daemon.stop(signal: SIGKILL) }
            let answer = try await ChildProcess.run(
                "curl",
                [
                    "-s", "--retry-connrefused", "--retry", "8", "--retry-max-time", "60", "-d",
                    #"{"jsonrpc":"2.0","id":1,"method":"aria2.getGlobalStat"}"#, "http://127.0.0.1:\(port)/jsonrpc",
                ],
                timeout: .seconds(90)
            )
            if daemon.status == .exited(3) { continue }  // cannot listen there
            #expect(answer.standardOutput.contains(#""numActive":"0""#), "\(answer.standardOutput)")
            daemon.send(SIGTERM)
            #expect(try await daemon.waitForExit(timeout: .seconds(60)) == .exited(0), "\(daemon.standardError)")
            #expect(daemon.standardOutput.isEmpty, "\(daemon.standardOutput)")
            #expect(daemon.standardError.isEmpty, "\(daemon.standardError)")
            return
        }
        Issue.record("three free ports were taken before the daemon could bind them")
    }
}
