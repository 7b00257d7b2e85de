import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `braid URL --extract DIR` against nginx: each format unpacks to the tree `tar -x` (or `bsdtar -x` for zip) makes
/// of the same archive, and resuming after `kill -9` finishes the same tree without writing finished entries again.
@Suite("--extract", .serialized)
struct ExtractTests {
    /// A tree with what real archives hold: nested directories (one private), files large and empty, an executable,
    /// a relative link and a hard link. No name starts with a dot, which names from outside may not.
    static func makeTree(at root: URL, largeFiles: Int = 1, largeSize: Int = 3 << 20) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: root.appendingPathComponent("sub/deep"), withIntermediateDirectories: true)
        for index in 0..<largeFiles {
            try PseudoRandomContent(seed: UInt64(index + 1)).write(
                to: root.appendingPathComponent("big-\(index).bin"), size: largeSize)
        }
        try Data("hello\n".utf8).write(to: root.appendingPathComponent("sub/a.txt"))
        try Data().write(to: root.appendingPathComponent("empty"))
        try Data("#!/bin/sh\necho run\n".utf8).write(to: root.appendingPathComponent("sub/run.sh"))
        chmod(root.appendingPathComponent("sub/run.sh").path, 0o755)
        chmod(root.appendingPathComponent("sub/deep").path, 0o700)
        try manager.createSymbolicLink(
            atPath: root.appendingPathComponent("sub/link").path, withDestinationPath: "../big-0.bin")
        link(root.appendingPathComponent("sub/a.txt").path, root.appendingPathComponent("hard.txt").path)
    }

    /// Runs a shell command to completion, expecting success.
    static func shell(_ command: String) async throws {
        let done = try await ChildProcess.run("/bin/sh", ["-c", command], timeout: .seconds(120))
        guard done.status == .exited(0) else {
            throw TestSupportError.launchFailed(command, underlying: POSIXError(.EIO))
        }
    }

    struct Fixture {
        let nginx: NginxFixture
        let directory: TemporaryDirectory
        var www: URL { directory.appending("www") }

        static func start(bytesPerSecond: Int? = nil) async throws -> Fixture {
            let directory = try TemporaryDirectory(prefix: "braid-extract")
            try FileManager.default.createDirectory(
                at: directory.appending("www"), withIntermediateDirectories: true)
            let locations: [NginxFixture.Location] =
                bytesPerSecond.map { [.prefix("/slow/", bytesPerSecond: $0)] } ?? []
            let nginx = try await NginxFixture.start(
                .init(documentRoot: directory.appending("www"), locations: locations))
            return Fixture(nginx: nginx, directory: directory)
        }

        func path(_ name: String) -> String { directory.appending(name).path }

        func shutdown() {
            nginx.shutdown()
            directory.remove()
        }
    }

    static let formats: [(name: String, create: String)] = [
        ("a.tar", "tar -cf"), ("a.tar.gz", "tar -czf"), ("a.tar.bz2", "tar -cjf"), ("a.tar.xz", "tar -cJf"),
        ("a.tar.zst", "tar --zstd -cf"), ("a.zip", "bsdtar --format zip -cf"),
    ]

    @Test(
        "Each format unpacks as it downloads to the tree tar -x makes of it (zip: names and contents)",
        arguments: formats.map(\.name))
    func sameTreeAsTar(format: String) async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let source = fixture.directory.appending("src")
        try Self.makeTree(at: source)
        let create = Self.formats.first { $0.name == format }!.create
        try await Self.shell("\(create) '\(fixture.www.path)/\(format)' -C '\(source.path)' .")
        try FileManager.default.createDirectory(atPath: fixture.path("ref"), withIntermediateDirectories: true)
        let reference = format.hasSuffix(".zip") ? "bsdtar -xf" : "tar --no-same-owner -xf"
        try await Self.shell("\(reference) '\(fixture.www.path)/\(format)' -C '\(fixture.path("ref"))'")

        let run = try await BraidCLI.run([
            fixture.nginx.url("/\(format)"), "--extract", fixture.path("out"), "-d", fixture.path("state"), "-n", "8",
        ])
        #expect(run.status == .exited(0), "\(run.standardError)")
        // A zip's permissions and links are in its central directory, at its end: a stream has unpacked by then.
        let withModes = !format.hasSuffix(".zip")
        let unpacked = TreeSnapshot(of: fixture.path("out"), withModes: withModes)
        var expected = TreeSnapshot(of: fixture.path("ref"), withModes: withModes)
        if !withModes { expected.nodes["sub/link"] = .file(mode: 0, contents: Data("../big-0.bin".utf8)) }
        #expect(unpacked == expected, "unpacked:\n\(unpacked)\nexpected:\n\(expected)")
        let state = (try? FileManager.default.contentsOfDirectory(atPath: fixture.path("state"))) ?? []
        #expect(state.isEmpty, "the archive and its manifest are not kept without --keep-archive: \(state)")
    }

    @Test("--keep-archive keeps the archive, verified, besides the tree")
    func keepArchive() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let source = fixture.directory.appending("src")
        try Self.makeTree(at: source)
        try await Self.shell("tar -czf '\(fixture.www.path)/a.tar.gz' -C '\(source.path)' .")
        let run = try await BraidCLI.run([
            fixture.nginx.url("/a.tar.gz"), "--extract", fixture.path("out"), "--keep-archive", "-d",
            fixture.path("state"),
        ])
        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(
            FileManager.default.contents(atPath: fixture.path("state/a.tar.gz"))
                == FileManager.default.contents(atPath: fixture.www.path + "/a.tar.gz"))
        #expect(
            TreeSnapshot(of: fixture.path("out")).nodes["sub/a.txt"]
                == .file(mode: 0o644, contents: Data("hello\n".utf8)))
    }

    /// Bytes nginx sent for `path`, over every request it logged.
    static func bytesSent(_ nginx: NginxFixture, path: String) -> Int {
        nginx.accessLog().filter { $0.path == path }.reduce(0) { $0 + $1.bodyBytesSent }
    }

    /// The inode of every regular file below `root`: a file written again gets a new one (rename into place).
    static func inodes(_ root: String) -> [String: ino_t] {
        var result: [String: ino_t] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            var status = stat()
            if lstat(root + "/" + relative, &status) == 0, status.st_mode & S_IFMT == S_IFREG {
                result[relative] = status.st_ino
            }
        }
        return result
    }

    @Test(
        "kill -9 mid-extraction, then the same command: the same tree, finished entries not written again",
        arguments: ["a.tar", "a.tar.gz"])
    func resumeAfterKill(format: String) async throws {
        // 4 connections at 2 MiB/s each through 12 files of 2 MiB: a few seconds, room for a kill in the middle.
        let fixture = try await Fixture.start(bytesPerSecond: 2 << 20)
        defer { fixture.shutdown() }
        let source = fixture.directory.appending("src")
        try Self.makeTree(at: source, largeFiles: 12, largeSize: 2 << 20)
        let create = format == "a.tar" ? "tar -cf" : "tar -czf"
        try await Self.shell("\(create) '\(fixture.www.path)/\(format)' -C '\(source.path)' .")
        try FileManager.default.createDirectory(atPath: fixture.path("ref"), withIntermediateDirectories: true)
        try await Self.shell("tar --no-same-owner -xf '\(fixture.www.path)/\(format)' -C '\(fixture.path("ref"))'")
        let size = try FileManager.default.attributesOfItem(atPath: fixture.www.path + "/" + format)[.size] as! Int
        let arguments = [
            fixture.nginx.url("/slow/\(format)"), "--extract", fixture.path("out"), "-d", fixture.path("state"),
            "-n", "4", "--stream-window", "8M", "--no-fsync",
        ]
        let child = try BraidCLI.start(arguments)
        defer { child.stop(signal: SIGKILL) }
        // Killed once some entries are in place and some are not.
        let manifest = fixture.path("state/\(format).braid")
        try await Polling.until("some entries unpacked", timeout: .seconds(120)) {
            Self.unpackedEntries(manifest) >= 7 || child.status != nil
        }
        #expect(child.status == nil, "the download ended before the kill: \(child.standardError)")
        child.send(SIGKILL)
        _ = try await child.waitForExit(timeout: .seconds(10))
        // Without --keep-archive, what was unpacked is freed from FILE.part: it holds about the 8 MiB window.
        let held = StreamOutputTests.allocated(fixture.path("state/\(format).part"))
        #expect(held <= 10 << 20, "FILE.part holds \(held) bytes with an 8 MiB window")
        let before = Self.inodes(fixture.path("out"))
        let recorded = Self.unpackedEntries(manifest)
        let sentBefore = Self.bytesSent(fixture.nginx, path: "/slow/\(format)")

        let again = try await BraidCLI.run(arguments)
        #expect(again.status == .exited(0), "\(again.standardError)")
        #expect(TreeSnapshot(of: fixture.path("out")) == TreeSnapshot(of: fixture.path("ref")))
        let after = Self.inodes(fixture.path("out"))
        let kept = before.filter { after[$0.key] == $0.value }.count
        #expect(kept >= recorded - 2, "only \(kept) of the \(recorded) entries recorded were left as they were")
        #expect(
            again.standardError.contains("entries already in place are not written again"), "\(again.standardError)")
        // Bytes fetched twice, counted from nginx's log: the requests the kill cut short end in its log too.
        try await Polling.until("nginx to log every request", timeout: .seconds(10)) {
            Self.bytesSent(fixture.nginx, path: "/slow/\(format)") >= size
        }
        let sent = Self.bytesSent(fixture.nginx, path: "/slow/\(format)")
        if format == "a.tar" {
            // An uncompressed tar resumes at an entry's header: little of what was unpacked is fetched again.
            #expect(sent <= size + (8 << 20) + (4 << 20), "sent \(sent) for \(size) (\(sentBefore) before the kill)")
        } else {
            #expect(again.standardError.contains("resumes from the archive's first byte"), "\(again.standardError)")
            #expect(sent <= 2 * size + (8 << 20), "sent \(sent) for \(size)")
        }
    }

    /// How many entries the manifest says are in place.
    static func unpackedEntries(_ path: String) -> Int {
        guard let data = FileManager.default.contents(atPath: path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let stream = object["stream"] as? [String: Any], let extraction = stream["extraction"] as? [String: Any]
        else { return 0 }
        return (extraction["entries"] as? NSNumber)?.intValue ?? 0
    }
}
