import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The core promise against a real nginx: segmented downloads are byte-identical, resume after SIGKILL fetching
/// little more than what was missing, and a wrong digest never leaves a file at the final name.
@Suite("braid against nginx", .serialized)
struct CoreDownloadTests {
    static let fileSize = 24 << 20
    // nginx's limit_rate lets each request send one second's worth of bytes at full speed before throttling, and
    // Braid makes one request per segment (1-2 MiB pieces here): throttles below are set low enough to bite.

    /// A served file, the nginx serving it, and a scratch directory, torn down together.
    struct Fixture {
        let nginx: NginxFixture
        let directory: TemporaryDirectory
        let md5: MD5Digest

        static func start(
            size: Int = CoreDownloadTests.fileSize,
            locations: (MD5Digest) -> [NginxFixture.Location] = { _ in [] }
        ) async throws -> Fixture {
            let directory = try TemporaryDirectory(prefix: "braid-core")
            let root = directory.appending("www")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try PseudoRandomContent(seed: 7).write(to: root.appendingPathComponent("file.bin"), size: size)
            let md5 = try await MD5Digest.of(fileAt: root.appendingPathComponent("file.bin"))
            let nginx = try await NginxFixture.start(.init(documentRoot: root, locations: locations(md5)))
            return Fixture(nginx: nginx, directory: directory, md5: md5)
        }

        func output(_ name: String = "out.bin") -> URL { directory.appending(name) }

        func shutdown() {
            nginx.shutdown()
            directory.remove()
        }
    }

    @Test("a segmented download over 8 connections is byte-identical and leaves no state behind")
    func segmentedDownload() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let output = fixture.output()

        let run = try await BraidCLI.run([fixture.nginx.url("/file.bin"), "-n", "8", "-o", output.path, "-q"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try await MD5Digest.of(fileAt: output) == fixture.md5)
        #expect(!FileManager.default.fileExists(atPath: output.path + ".part"))
        #expect(!FileManager.default.fileExists(atPath: output.path + ".braid"))
        #expect(run.standardError.isEmpty, "-q prints nothing but errors")
        // nginx logs a request a moment after the client has its last byte: wait until the GETs account for the file.
        let gets = try await fixture.nginx.waitForAccessLog("GETs of the whole file") {
            $0.filter { $0.method == "GET" }.reduce(0) { $0 + $1.bodyBytesSent } >= CoreDownloadTests.fileSize
        }.filter { $0.method == "GET" }
        #expect(gets.allSatisfy { $0.status == 206 && $0.range != nil }, "every GET is a range request")
        // Segments ran side by side over several connections, no more than 8 and one for each response cut short (the
        // probe's, and a steal's victim on a loaded machine: the slot's next request opens another); fewer when a
        // segment that started late found an earlier one's connection idle in the pool.
        let cut = gets.filter { !$0.isComplete }.count
        #expect(
            (2...(8 + max(1, cut))).contains(Set(gets.map(\.connection)).count),
            "\(Set(gets.map(\.connection)).count) connections, \(cut) responses cut")
        // No byte fetched twice: the range requests fetch the file past what the first request kept of the probe's
        // response (bytes=0-, the only request for the first bytes, which sends past its cut what the socket buffers
        // held). A response cut short by a steal sends past its cut too, a few socket buffers: a loaded machine's
        // lagging connection is stolen from, an idle one's is not.
        let probe = gets.filter { $0.range == "bytes=0-" }
        let ranges = gets.filter { $0.range != "bytes=0-" }
        let kept = ranges.compactMap { $0.range?.dropFirst(6).split(separator: "-").first.flatMap { Int($0) } }.min()
        #expect(probe.count == 1 && kept.map { $0 > 0 } == true, "\(gets.map { $0.range ?? "-" })")
        let beyondKept = ranges.reduce(0) { $0 + $1.bodyBytesSent } - (CoreDownloadTests.fileSize - (kept ?? 0))
        #expect(
            (0...(8 << 20)).contains(beyondKept),
            "\(beyondKept) bytes past the file: \(ranges.map { ($0.range ?? "-", $0.bodyBytesSent) })")
        print("probe's response: \(probe.first?.bodyBytesSent ?? 0) bytes sent, \(kept ?? 0) kept")
    }

    @Test("a download killed with SIGKILL resumes and fetches little more than the missing bytes")
    func resumesAfterSIGKILL() async throws {
        let size = 32 << 20
        let fixture = try await Fixture.start(size: size) { _ in
            [.prefix("/slow/", bytesPerSecond: 1 << 20)]
        }
        defer { fixture.shutdown() }
        let output = fixture.output()
        let manifestURL = URL(fileURLWithPath: output.path + ".braid")
        let url = fixture.nginx.url("/slow/file.bin")

        let first = try BraidCLI.start([url, "-n", "4", "-o", output.path, "-q"])
        defer { first.stop(signal: SIGKILL) }
        try await first.waitUntil("a quarter of the file checkpointed", timeout: .seconds(60)) {
            (ManifestFile(at: manifestURL)?.done ?? 0) >= Int64(size / 4)
        }
        first.send(SIGKILL)
        #expect(try await first.waitForExit(timeout: .seconds(10)) == .signalled(SIGKILL))

        let manifest = try #require(ManifestFile(at: manifestURL))
        let missing = Int(manifest.length - manifest.done)
        let logged = fixture.nginx.accessLog().count

        let second = try await BraidCLI.run([url, "-n", "4", "-o", output.path])

        #expect(second.status == .exited(0), "\(second.standardError)")
        #expect(second.standardError.contains("resuming at"))
        #expect(try await MD5Digest.of(fileAt: output) == fixture.md5)
        // nginx logs a request cut off by the kill only when it next tries to send, which a loaded machine can put
        // after the second run has started: the second run's requests are the ones on connections opened after its
        // probe's (nginx numbers connections in the order it accepts them).
        let later = fixture.nginx.accessLog().dropFirst(logged)
        let probe = try #require(later.first { $0.method == "HEAD" }, "the second run probes with HEAD")
        let fetched = later.filter { $0.method == "GET" && $0.connection >= probe.connection }
            .reduce(0) { $0 + $1.bodyBytesSent }
        #expect(fetched >= missing)
        #expect(fetched <= missing + (1 << 20), "fetched \(fetched) bytes for \(missing) missing")
    }

    @Test("a wrong Content-MD5 from the server is refused and no file is left at the final name")
    func wrongContentMD5() async throws {
        let wrong = MD5Digest(hex: "0123456789abcdef0123456789abcdef")!
        let fixture = try await Fixture.start { _ in
            [.exact("/bad.bin", serving: "/file.bin", headers: [("Content-MD5", wrong.base64)])]
        }
        defer { fixture.shutdown() }
        let output = fixture.output()

        let run = try await BraidCLI.run([fixture.nginx.url("/bad.bin"), "-o", output.path])

        #expect(run.status == .exited(6), "\(run.standardError)")
        #expect(run.standardError.contains("md5 mismatch"))
        #expect(run.standardError.contains("Content-MD5"))
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test("a right Content-MD5 from the server is checked and the file kept")
    func rightContentMD5() async throws {
        let fixture = try await Fixture.start { md5 in
            [.exact("/good.bin", serving: "/file.bin", headers: [("Content-MD5", md5.base64)])]
        }
        defer { fixture.shutdown() }
        let output = fixture.output()

        let run = try await BraidCLI.run([fixture.nginx.url("/good.bin"), "-o", output.path])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(run.standardError.contains("md5 verified"))
        #expect(try await MD5Digest.of(fileAt: output) == fixture.md5)
    }

    @Test("a wrong --checksum is refused, no file is left at the final name, and the data is kept for --repair")
    func wrongChecksum() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let output = fixture.output()
        let wrong = "sha-256=" + String(repeating: "ab", count: 32)

        let run = try await BraidCLI.run([fixture.nginx.url("/file.bin"), "-o", output.path, "--checksum", wrong])

        #expect(run.status == .exited(6), "\(run.standardError)")
        #expect(run.standardError.contains("sha-256 mismatch"))
        #expect(run.standardError.contains("run again with --repair"), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(FileManager.default.fileExists(atPath: output.path + ".part"), "the data is kept for a repair")
        #expect(FileManager.default.fileExists(atPath: output.path + ".braid"))
    }

    @Test("a right --checksum passes")
    func rightChecksum() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let output = fixture.output()

        let run = try await BraidCLI.run([
            fixture.nginx.url("/file.bin"), "-o", output.path, "--checksum", "md5=\(fixture.md5.hex)",
        ])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(run.standardError.contains("md5 verified"))
    }

    @Test(
        "bad arguments fail with one line and exit 2 or 3 before any network traffic",
        arguments: [
            (["-n", "0"], Int32(2)),
            (["--checksum", "md5=zz"], 2),
            (["--checksum", "crc32=00"], 2),
            (["-H", "NoColon"], 2),
            // A missing directory is created; one under a file that is not a directory cannot be.
            (["-d", "/dev/null/dir"], 3),
            (["-o", "/tmp"], 2),
        ] as [([String], Int32)]
    )
    func badArguments(extra: [String], status: Int32) async throws {
        let fixture = try await Fixture.start(size: 1 << 20)
        defer { fixture.shutdown() }

        let run = try await BraidCLI.run([fixture.nginx.url("/file.bin")] + extra)

        #expect(run.status == .exited(status), "\(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count == 1, "one line: \(run.standardError)")
        #expect(fixture.nginx.accessLog().isEmpty, "no request was sent")
    }

    @Test("malformed and non-HTTP URLs are usage errors", arguments: ["not a url", "ftp://127.0.0.1/x", "http://"])
    func badURL(url: String) async throws {
        let run = try await BraidCLI.run([url, "-o", "/tmp/braid-never-written"])

        #expect(run.status == .exited(2), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/braid-never-written"))
    }

    @Test("an existing complete file is not overwritten without --force")
    func existingFile() async throws {
        let fixture = try await Fixture.start(size: 1 << 20)
        defer { fixture.shutdown() }
        let output = fixture.output()
        try Data("keep me".utf8).write(to: output)

        let refused = try await BraidCLI.run([fixture.nginx.url("/file.bin"), "-o", output.path])
        #expect(refused.status == .exited(8), "\(refused.standardError)")
        #expect(try Data(contentsOf: output) == Data("keep me".utf8))

        let forced = try await BraidCLI.run([fixture.nginx.url("/file.bin"), "-o", output.path, "--force"])
        #expect(forced.status == .exited(0), "\(forced.standardError)")
        #expect(try await MD5Digest.of(fileAt: output) == fixture.md5)
    }

    @Test("a corrupt or foreign manifest is refused with exit 7, and discarded with --force")
    func unusableManifest() async throws {
        let fixture = try await Fixture.start(size: 4 << 20)
        defer { fixture.shutdown() }
        let output = fixture.output()
        let manifest = output.path + ".braid"
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: manifest))
        try Data(count: 4 << 20).write(to: URL(fileURLWithPath: output.path + ".part"))

        let refused = try await BraidCLI.run([fixture.nginx.url("/file.bin"), "-o", output.path])
        #expect(refused.status == .exited(7), "\(refused.standardError)")
        #expect(refused.standardError.contains("corrupt"))
        #expect(FileManager.default.fileExists(atPath: manifest), "the manifest is left for the user to inspect")

        let forced = try await BraidCLI.run([fixture.nginx.url("/file.bin"), "-o", output.path, "--force"])
        #expect(forced.status == .exited(0), "\(forced.standardError)")
        #expect(try await MD5Digest.of(fileAt: output) == fixture.md5)
    }

    @Test("SIGINT checkpoints, says how to resume and exits 130; the next run finishes")
    func interruptAndResume() async throws {
        let size = 16 << 20
        let fixture = try await Fixture.start(size: size) { _ in [.prefix("/slow/", bytesPerSecond: 512 << 10)] }
        defer { fixture.shutdown() }
        let output = fixture.output()
        let manifestURL = URL(fileURLWithPath: output.path + ".braid")
        let url = fixture.nginx.url("/slow/file.bin")

        let first = try BraidCLI.start([url, "-n", "2", "-o", output.path])
        defer { first.stop(signal: SIGKILL) }
        try await first.waitUntil("some progress checkpointed", timeout: .seconds(60)) {
            (ManifestFile(at: manifestURL)?.done ?? 0) > 0
        }
        first.send(SIGINT)

        #expect(try await first.waitForExit(timeout: .seconds(20)) == .exited(130))
        #expect(first.standardError.contains("run the same command again to resume"))
        let saved = try #require(ManifestFile(at: manifestURL))
        #expect(saved.done > 0 && saved.done < Int64(size))

        let second = try await BraidCLI.run([url, "-n", "8", "-o", output.path, "-q"])
        #expect(second.status == .exited(0), "\(second.standardError)")
        #expect(try await MD5Digest.of(fileAt: output) == fixture.md5)
    }

    @Test("a remote file that changed between runs is detected and downloaded afresh")
    func remoteChangedBetweenRuns() async throws {
        let size = 8 << 20
        let fixture = try await Fixture.start(size: size) { _ in [.prefix("/slow/", bytesPerSecond: 256 << 10)] }
        defer { fixture.shutdown() }
        let output = fixture.output()
        let manifestURL = URL(fileURLWithPath: output.path + ".braid")
        let url = fixture.nginx.url("/slow/file.bin")

        let first = try BraidCLI.start([url, "-n", "2", "-o", output.path, "-q"])
        defer { first.stop(signal: SIGKILL) }
        try await first.waitUntil("some progress checkpointed", timeout: .seconds(60)) {
            (ManifestFile(at: manifestURL)?.done ?? 0) > 0
        }
        first.send(SIGKILL)
        _ = try await first.waitForExit(timeout: .seconds(10))

        // New content of a different length: a new ETag and Last-Modified.
        let served = fixture.nginx.documentRoot.appendingPathComponent("file.bin")
        try PseudoRandomContent(seed: 99).write(to: served, size: size / 2)
        let newMD5 = try await MD5Digest.of(fileAt: served)

        let second = try await BraidCLI.run([url, "-n", "4", "-o", output.path])
        #expect(second.status == .exited(0), "\(second.standardError)")
        #expect(second.standardError.contains("changed"))
        #expect(try await MD5Digest.of(fileAt: output) == newMD5)
    }
}

extension CoreDownloadTests {
    @Test("a tampered manifest (overlapping or out-of-bounds segments) is refused, never trusted")
    func tamperedManifest() async throws {
        let fixture = try await Fixture.start(size: 4 << 20)
        defer { fixture.shutdown() }
        let output = fixture.output()
        let url = fixture.nginx.url("/file.bin")
        let length = 4 << 20
        for segments in [
            #"[{"start":0,"end":3000000,"done":3000000,"durable":0},{"start":2000000,"end":4194304,"done":0,"durable":0}]"#,
            #"[{"start":0,"end":9999999,"done":9999999,"durable":0}]"#,
        ] {
            let manifest = """
                {"format":"braid-manifest","version":1,"url":"\(url)","resolvedURL":"\(url)","length":\(length),\
                "bootID":"x","segments":\(segments)}
                """
            try Data(manifest.utf8).write(to: URL(fileURLWithPath: output.path + ".braid"))
            try Data(count: length).write(to: URL(fileURLWithPath: output.path + ".part"))

            let run = try await BraidCLI.run([url, "-o", output.path])

            #expect(run.status == .exited(7), "\(run.standardError)")
            #expect(run.standardError.contains("invalid"))
            #expect(!FileManager.default.fileExists(atPath: output.path))
        }
    }
}

extension CoreDownloadTests {
    @Test("a --checksum given to an interrupted run still applies when the resumed run is not given one")
    func checksumCarriesOverResume() async throws {
        let size = 8 << 20
        let fixture = try await Fixture.start(size: size) { _ in [.prefix("/slow/", bytesPerSecond: 512 << 10)] }
        defer { fixture.shutdown() }
        let output = fixture.output()
        let manifestURL = URL(fileURLWithPath: output.path + ".braid")
        let url = fixture.nginx.url("/slow/file.bin")
        let wrong = "md5=" + String(repeating: "0", count: 32)

        let first = try BraidCLI.start([url, "-n", "2", "-o", output.path, "-q", "--checksum", wrong])
        defer { first.stop(signal: SIGKILL) }
        try await first.waitUntil("some progress checkpointed", timeout: .seconds(60)) {
            (ManifestFile(at: manifestURL)?.done ?? 0) > 0
        }
        first.send(SIGKILL)
        _ = try await first.waitForExit(timeout: .seconds(10))

        let second = try await BraidCLI.run([url, "-n", "4", "-o", output.path])

        #expect(second.status == .exited(6), "\(second.standardError)")
        #expect(second.standardError.contains("from --checksum"))
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }
}
