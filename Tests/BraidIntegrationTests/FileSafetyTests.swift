import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The download directory is not a way to write elsewhere: Braid follows no link planted at its own file names,
/// never replaces a file that appeared at the final name, lets one process at a time work on a download, keeps
/// its state readable by the owner only, and stores no credentials at rest.
@Suite("files, links, locks and secrets", .serialized)
struct FileSafetyTests {
    static let content = TestContent(seed: 21, size: 1 << 20)
    static let large = TestContent(seed: 22, size: 4 << 20)

    /// A test server, a download directory `out` and a directory `outside` that no download may touch.
    struct Fixture {
        let server: TestServer
        let directory: TemporaryDirectory

        init(routes: [String: TestServer.Route]) throws {
            server = TestServer(routes: routes)
            try server.start()
            directory = try TemporaryDirectory(prefix: "braid-files")
            for folder in ["out", "outside"] {
                try FileManager.default.createDirectory(
                    at: directory.appending(folder), withIntermediateDirectories: true)
            }
        }

        func output(_ name: String = "f.bin") -> String { directory.appending("out").appendingPathComponent(name).path }
        func outside(_ name: String) -> String { directory.appending("outside").appendingPathComponent(name).path }

        func shutdown() {
            server.shutdown()
            directory.remove()
        }
    }

    /// The permission bits of a file, without following a link.
    static func mode(of path: String) -> mode_t? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o7777
    }

    static func isSymbolicLink(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
    }

    @Test(
        "a symbolic link planted at a state file is refused with exit 3 and its target is never written",
        arguments: [".part", ".braid", ".braid.tmp", ".braid.reserve"], [true, false]
    )
    func plantedStateLink(suffix: String, targetExists: Bool) async throws {
        let fixture = try Fixture(routes: ["/f.bin": .init(content: Self.content)])
        defer { fixture.shutdown() }
        let victim = fixture.outside("victim")
        if targetExists { try Data("precious".utf8).write(to: URL(fileURLWithPath: victim)) }
        let link = fixture.output() + suffix
        #expect(symlink(victim, link) == 0)

        let run = try await BraidCLI.run([fixture.server.url("/f.bin"), "-o", fixture.output(), "-n", "2"])

        #expect(run.status == .exited(3), "\(run.standardError)")
        #expect(
            run.standardError.contains(
                "\(link) is a symbolic link; Braid does not follow links for its own files: remove it"),
            "\(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count == 1, "one line: \(run.standardError)")
        if targetExists {
            #expect(try Data(contentsOf: URL(fileURLWithPath: victim)) == Data("precious".utf8))
        } else {
            #expect(!FileManager.default.fileExists(atPath: victim), "nothing was created outside the directory")
        }
        #expect(Self.isSymbolicLink(link), "the link is left for the user to inspect")
        #expect(Self.mode(of: fixture.output()) == nil, "no file at the final name")
    }

    @Test("a dangling symbolic link at the final name counts as an existing file; --force replaces the link")
    func linkAtFinalName() async throws {
        let fixture = try Fixture(routes: ["/f.bin": .init(content: Self.content)])
        defer { fixture.shutdown() }
        let victim = fixture.outside("victim")
        #expect(symlink(victim, fixture.output()) == 0)

        let refused = try await BraidCLI.run([fixture.server.url("/f.bin"), "-o", fixture.output()])

        #expect(refused.status == .exited(8), "\(refused.standardError)")
        #expect(refused.standardError.contains("already exists"), "\(refused.standardError)")
        #expect(Self.isSymbolicLink(fixture.output()))
        #expect(!FileManager.default.fileExists(atPath: victim))

        let forced = try await BraidCLI.run([fixture.server.url("/f.bin"), "-o", fixture.output(), "--force"])

        #expect(forced.status == .exited(0), "\(forced.standardError)")
        #expect(!Self.isSymbolicLink(fixture.output()), "the link itself was replaced")
        #expect(try Self.content.firstDifference(fromFileAt: fixture.output()) == nil)
        #expect(!FileManager.default.fileExists(atPath: victim), "the link's target was never created")
    }

    @Test("a second braid on the same download fails with exit 3 naming the first; the first finishes intact")
    func secondProcessIsLockedOut() async throws {
        let fixture = try Fixture(routes: [
            "/f.bin": .init(content: Self.large, faults: [.throttle(bytesPerSecond: 256 << 10)])
        ])
        defer { fixture.shutdown() }
        let arguments = [fixture.server.url("/f.bin"), "-o", fixture.output(), "-n", "2", "-q", "--no-fsync"]
        let manifest = URL(fileURLWithPath: fixture.output() + ".braid")

        let first = try BraidCLI.start(arguments)
        defer { first.stop(signal: SIGKILL) }
        try await first.waitUntil("the first run to write its manifest", timeout: .seconds(30)) {
            ManifestFile(at: manifest) != nil
        }

        let second = try await BraidCLI.run(arguments)

        #expect(second.status == .exited(3), "\(second.standardError)")
        #expect(second.standardError.contains("process \(first.processIdentifier)"), "\(second.standardError)")
        #expect(second.standardError.split(separator: "\n").count == 1, "one line: \(second.standardError)")
        fixture.server.setRoute("/f.bin", .init(content: Self.large))
        #expect(try await first.waitForExit(timeout: .seconds(60)) == .exited(0), "\(first.standardError)")
        #expect(try Self.large.firstDifference(fromFileAt: fixture.output()) == nil)
    }

    @Test("two downloads of one file in one process: the second is refused with exit 3, the first finishes intact")
    func secondDownloadInProcessIsLockedOut() async throws {
        let fixture = try Fixture(routes: [
            "/f.bin": .init(content: Self.large, faults: [.throttle(bytesPerSecond: 256 << 10)])
        ])
        defer { fixture.shutdown() }
        var options = DownloadOptions()
        options.destination = .file(fixture.output())
        options.connections = 2
        options.syncOnCompletion = false
        let first = Download(url: fixture.server.url("/f.bin"), options: options)
        let running = Task { try await first.run() }
        defer { first.cancel() }
        try await Polling.until("the first download to write its manifest", timeout: .seconds(30)) {
            ManifestFile(at: URL(fileURLWithPath: fixture.output() + ".braid")) != nil
        }

        let refusal: BraidError?
        do {
            _ = try await Download(url: fixture.server.url("/f.bin"), options: options).run()
            refusal = nil
        } catch {
            refusal = error
        }

        #expect(refusal?.code == .localIO, "\(String(describing: refusal))")
        #expect(refusal?.message.contains("another download of the same file in this process") == true)
        fixture.server.setRoute("/f.bin", .init(content: Self.large))
        _ = try await running.value
        #expect(try Self.large.firstDifference(fromFileAt: fixture.output()) == nil)
    }

    @Test("a file that appears at the final name mid-download is kept (exit 8); the download waits in FILE.part")
    func fileAppearsAtFinalName() async throws {
        let fixture = try Fixture(routes: [
            "/f.bin": .init(content: Self.large, faults: [.throttle(bytesPerSecond: 512 << 10)])
        ])
        defer { fixture.shutdown() }
        let arguments = [fixture.server.url("/f.bin"), "-o", fixture.output(), "-n", "2", "--no-fsync"]
        let manifest = URL(fileURLWithPath: fixture.output() + ".braid")

        let first = try BraidCLI.start(arguments)
        defer { first.stop(signal: SIGKILL) }
        try await first.waitUntil("the manifest", timeout: .seconds(30)) { ManifestFile(at: manifest) != nil }
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: fixture.output()))
        fixture.server.setRoute("/f.bin", .init(content: Self.large))

        #expect(try await first.waitForExit(timeout: .seconds(60)) == .exited(8), "\(first.standardError)")
        #expect(first.standardError.contains("appeared"), "\(first.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.output())) == Data("someone else's".utf8))
        #expect(try Self.large.firstDifference(fromFileAt: fixture.output() + ".part") == nil, "the data is kept")
        #expect(Self.mode(of: fixture.output() + ".part") == 0o600)

        // Once the user moves the other file away, the same command finishes without fetching the file again.
        #expect(unlink(fixture.output()) == 0)
        #expect(fixture.server.waitUntilIdle())
        let sentBefore = fixture.server.totalBodyBytesSent
        let again = try await BraidCLI.run(arguments)
        #expect(again.status == .exited(0), "\(again.standardError)")
        #expect(try Self.large.firstDifference(fromFileAt: fixture.output()) == nil)
        #expect(fixture.server.waitUntilIdle())
        #expect(fixture.server.totalBodyBytesSent <= sentBefore + 1024, "only a probe, the data is not fetched again")
    }

    @Test("the manifest and FILE.part are private while downloading; the finished file gets 0666 & ~umask")
    func permissions() async throws {
        let fixture = try Fixture(routes: [
            "/f.bin": .init(content: Self.large, faults: [.throttle(bytesPerSecond: 512 << 10)])
        ])
        defer { fixture.shutdown() }
        let output = fixture.output()

        let child = try ChildProcess(
            "/bin/sh",
            ["-c", "umask 022; exec \"$0\" \"$@\"", BraidCLI.path, fixture.server.url("/f.bin"), "-o", output, "-q"]
        )
        defer { child.stop(signal: SIGKILL) }
        try await child.waitUntil("the manifest", timeout: .seconds(30)) {
            ManifestFile(at: URL(fileURLWithPath: output + ".braid")) != nil
        }

        #expect(Self.mode(of: output + ".part") == 0o600)
        #expect(Self.mode(of: output + ".braid") == 0o600)
        fixture.server.setRoute("/f.bin", .init(content: Self.large))
        #expect(try await child.waitForExit(timeout: .seconds(60)) == .exited(0), "\(child.standardError)")
        #expect(Self.mode(of: output) == 0o644)
        #expect(try Self.large.firstDifference(fromFileAt: output) == nil)
    }

    @Test("a URL with user:password@ leaves no password in the manifest, and the download still resumes")
    func credentialsAreNotStored() async throws {
        let fixture = try Fixture(routes: [
            "/f.bin": .init(content: Self.large, faults: [.throttle(bytesPerSecond: 256 << 10)])
        ])
        defer { fixture.shutdown() }
        let url = "http://user:secret@127.0.0.1:\(fixture.server.port)/f.bin"
        let arguments = [url, "-o", fixture.output(), "-n", "2", "--no-fsync"]
        let manifest = URL(fileURLWithPath: fixture.output() + ".braid")

        let first = try BraidCLI.start(arguments)
        defer { first.stop(signal: SIGKILL) }
        try await first.waitUntil("some progress checkpointed", timeout: .seconds(30)) {
            (ManifestFile(at: manifest)?.done ?? 0) > 0
        }
        first.send(SIGINT)
        #expect(try await first.waitForExit(timeout: .seconds(20)) == .exited(130), "\(first.standardError)")

        let stored = try String(contentsOf: manifest, encoding: .utf8)
        #expect(!stored.contains("secret"), "\(stored)")
        #expect(stored.contains("127.0.0.1:\(fixture.server.port)"), "the URL is kept, without credentials")
        #expect(Self.mode(of: manifest.path) == 0o600)

        fixture.server.setRoute("/f.bin", .init(content: Self.large))
        let second = try await BraidCLI.run(arguments)

        #expect(second.status == .exited(0), "\(second.standardError)")
        #expect(second.standardError.contains("resuming at"), "\(second.standardError)")
        #expect(try Self.large.firstDifference(fromFileAt: fixture.output()) == nil)
    }
}
