import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `scripts/demo`, the README's first command, as a newcomer meets it: Ctrl-C stops the download with braid's
/// status and takes the server down cleanly, and running it again resumes and verifies the file.
///
/// The script runs with the braid of this build (`BRAID_DEMO_BRAID`), so it neither installs nor builds.
@Suite("scripts/demo", .serialized)
struct DemoScriptTests {
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/demo").path

    /// The script's environment: this build's braid, a scratch directory, a free port, a small file taking
    /// `seconds` to download.
    static func environment(directory: TemporaryDirectory, port: Int, seconds: Int) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = (environment["PATH"].map { $0 + ":" } ?? "") + "/usr/sbin:/sbin"
        environment["BRAID_DEMO_BRAID"] = BraidCLI.path
        environment["BRAID_DEMO_DIR"] = directory.url.path
        environment["BRAID_DEMO_PORT"] = String(port)
        environment["BRAID_DEMO_MIB"] = "8"
        environment["BRAID_DEMO_SECONDS"] = String(seconds)
        return environment
    }

    /// Stops the demo's nginx, if it still runs, and removes `directory`.
    static func cleanUp(_ directory: TemporaryDirectory) {
        if let pid = nginx(in: directory) { kill(pid, SIGTERM) }
        directory.remove()
    }

    /// The nginx the demo started, from its pid file; nil when none is running.
    static func nginx(in directory: TemporaryDirectory) -> pid_t? {
        let file = directory.appending("nginx/nginx.pid").path
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        return pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test("Ctrl-C reaches braid only: exit 130, no retries, nginx stopped; run again, it resumes and verifies")
    func interruptAndResume() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-demo")
        defer { Self.cleanUp(directory) }
        let port = try FreePort.pick()
        let manifest = directory.appending("downloads/demo.bin.braid")
        // A terminal's Ctrl-C goes to its foreground process group: the script and everything it started there.
        let demo = try ChildProcess(
            "/bin/bash", [Self.script], environment: Self.environment(directory: directory, port: port, seconds: 60),
            newProcessGroup: true)
        defer { demo.stop(signal: SIGKILL) }
        try await demo.waitUntil("some progress checkpointed", timeout: .seconds(60)) {
            (ManifestFile(at: manifest)?.done ?? 0) > 0
        }
        let nginx = try #require(Self.nginx(in: directory))

        demo.sendToGroup(SIGINT)

        #expect(try await demo.waitForExit(timeout: .seconds(20)) == .exited(130), "\(demo.standardError)")
        #expect(demo.standardError.contains("run the same command again to resume"), "\(demo.standardError)")
        #expect(!demo.standardError.contains("retrying"), "the server did not see Ctrl-C: \(demo.standardError)")
        #expect(!ProcessTable.isRunning(nginx), "the script stopped its nginx")
        #expect(Self.nginx(in: directory) == nil)

        let again = try await ChildProcess.run(
            "/bin/bash", [Self.script], environment: Self.environment(directory: directory, port: port, seconds: 2))

        #expect(again.status == .exited(0), "\(again.standardError)")
        #expect(again.standardError.contains("resuming at"), "\(again.standardError)")
        #expect(again.standardError.contains("md5 verified"), "\(again.standardError)")
        #expect(Self.nginx(in: directory) == nil, "the script stopped its nginx")
        let downloaded = try Data(contentsOf: directory.appending("downloads/demo.bin"))
        let served = try Data(contentsOf: directory.appending("www/demo.bin"))
        #expect(downloaded == served)
    }

    @Test("a port another server holds: the demo says so and exits 1, downloading nothing from that server")
    func portTaken() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-demo")
        defer { Self.cleanUp(directory) }
        // Another server on the port, which answers any request (a 404 for the demo's file).
        let other = try await NginxFixture.start()
        defer { other.shutdown() }

        let run = try await ChildProcess.run(
            "/bin/bash", [Self.script],
            environment: Self.environment(directory: directory, port: other.port, seconds: 2))

        #expect(run.status == .exited(1), "\(run.standardOutput) \(run.standardError)")
        #expect(run.standardOutput.contains("nginx failed to start on port \(other.port)"), "\(run.standardOutput)")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("downloads/demo.bin").path))
        #expect(Self.nginx(in: directory) == nil)
    }
}
