import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `braid -i FILE`: many downloads at once under shared connection caps, each failing on its own, with a summary,
/// an exit status that says whether all succeeded, and a second run that skips what is complete.
@Suite("braid -i: download lists", .serialized)
struct ListDownloadTests {
    static let good = TestContent(seed: 1, size: 3 << 20)
    static let slow = TestContent(seed: 2, size: 2 << 20)
    static let checked = TestContent(seed: 3, size: 1 << 20)
    static let tampered = TestContent(seed: 4, size: 1 << 20)

    /// A server, a scratch directory with an `out` folder, and the list file written into it.
    struct Fixture {
        let server: TestServer
        let directory: TemporaryDirectory

        init(routes: [String: TestServer.Route]) throws {
            server = TestServer(routes: routes)
            try server.start()
            directory = try TemporaryDirectory(prefix: "braid-list")
            try FileManager.default.createDirectory(at: output(""), withIntermediateDirectories: true)
        }

        func output(_ name: String) -> URL { directory.appending("out").appendingPathComponent(name) }

        /// Writes `text` as the list file and returns its path.
        func list(_ text: String) throws -> String {
            let url = directory.appending("list.txt")
            try Data(text.utf8).write(to: url)
            return url.path
        }

        /// Finished responses for `path` in the log (after waiting for the server to be idle).
        func requests(to path: String, method: String? = nil) -> [TestServer.RequestRecord] {
            server.waitUntilIdle()
            return server.requestLog.filter { $0.target == path && (method == nil || $0.method == method) }
        }

        func shutdown() {
            server.shutdown()
            directory.remove()
        }
    }

    @Test("good, throttled, checksummed, wrongly checksummed and missing files: right files, exit and summary")
    func mixedList() async throws {
        let fixture = try Fixture(routes: [
            "/good.bin": .init(content: Self.good),
            "/slow.bin": .init(content: Self.slow, faults: [.throttle(bytesPerSecond: 1 << 20)]),
            "/checked.bin": .init(content: Self.checked),
            "/tampered.bin": .init(content: Self.tampered),
            "/missing.bin": .init(size: 1000, faults: [.status(404, retryAfter: nil)]),
        ])
        defer { fixture.shutdown() }
        let server = fixture.server
        let list = try fixture.list(
            """
            # a mix of outcomes
            \(server.url("/good.bin"))
            \(server.url("/slow.bin"))
              connections=2

            \(server.url("/checked.bin"))
              out=checked-renamed.bin
              checksum=sha-256=\(Self.checked.hexDigest(.sha256))
            \(server.url("/tampered.bin"))
              checksum=sha-256=\(Self.good.hexDigest(.sha256))
            \(server.url("/missing.bin"))
            """)
        let arguments = ["-i", list, "-d", fixture.output("").path, "-n", "4", "--no-fsync"]

        let first = try await BraidCLI.run(arguments)

        #expect(
            first.status == .exited(6), "the first failure in list order is the wrong digest: \(first.standardError)")
        #expect(try Self.good.firstDifference(fromFileAt: fixture.output("good.bin").path) == nil)
        #expect(try Self.slow.firstDifference(fromFileAt: fixture.output("slow.bin").path) == nil)
        #expect(try Self.checked.firstDifference(fromFileAt: fixture.output("checked-renamed.bin").path) == nil)
        for absent in ["tampered.bin", "missing.bin", "checked.bin"] {
            #expect(!FileManager.default.fileExists(atPath: fixture.output(absent).path), "\(absent) is absent")
        }
        #expect(FileManager.default.fileExists(atPath: fixture.output("tampered.bin.part").path), "kept for --repair")
        let summary = Self.summaryRows(first.standardError)
        #expect(summary["good.bin"]?.hasPrefix("completed (length verified)") == true, "\(summary)")
        #expect(summary["slow.bin"]?.hasPrefix("completed") == true, "\(summary)")
        #expect(
            summary["checked-renamed.bin"]?.hasPrefix("completed (sha-256 verified against --checksum)") == true,
            "\(summary)")
        #expect(summary["tampered.bin"]?.hasPrefix("failed (exit 6)") == true, "\(summary)")
        #expect(summary["missing.bin"]?.hasPrefix("failed (exit 5)") == true, "\(summary)")
        #expect(first.standardError.contains("3 of 5 succeeded, 2 failed"))
        #expect(first.standardError.contains("sha-256 mismatch"))
        #expect(first.standardError.contains("404"))
        #expect(first.standardOutput.isEmpty, "without --json nothing goes to stdout")

        // The same command again: complete files are verified in place, the kept data of the mismatch is verified
        // again (not fetched), the failures fail again.
        let paths = ["/good.bin", "/slow.bin", "/checked.bin", "/tampered.bin"]
        let gets = Dictionary(uniqueKeysWithValues: paths.map { ($0, fixture.requests(to: $0, method: "GET").count) })
        let second = try await BraidCLI.run(arguments)

        #expect(second.status == .exited(6), "\(second.standardError)")
        for path in ["/good.bin", "/slow.bin", "/checked.bin"] {
            #expect(fixture.requests(to: path, method: "GET").count == gets[path], "no GET for the complete \(path)")
        }
        #expect(
            fixture.requests(to: "/tampered.bin", method: "GET").count == gets["/tampered.bin"], "kept, not fetched")
        let again = Self.summaryRows(second.standardError)
        #expect(again["good.bin"]?.hasPrefix("skipped") == true, "\(again)")
        #expect(again["slow.bin"]?.hasPrefix("skipped") == true, "\(again)")
        #expect(again["checked-renamed.bin"]?.hasPrefix("skipped") == true, "\(again)")
        #expect(again["tampered.bin"]?.hasPrefix("failed (exit 6)") == true, "\(again)")
        #expect(again["missing.bin"]?.hasPrefix("failed (exit 5)") == true, "\(again)")
        #expect(try Self.checked.firstDifference(fromFileAt: fixture.output("checked-renamed.bin").path) == nil)
    }

    @Test("with -j 1 the second download opens no connection before the first has finished (it may reuse one)")
    func oneAtATime() async throws {
        let content = TestContent(seed: 5, size: 1 << 20)
        let throttle: [TestServer.Fault] = [.throttle(bytesPerSecond: 2 << 20)]
        let fixture = try Fixture(routes: [
            "/a.bin": .init(content: content, faults: throttle), "/b.bin": .init(content: content, faults: throttle),
        ])
        defer { fixture.shutdown() }
        let list = try fixture.list("\(fixture.server.url("/a.bin"))\n\(fixture.server.url("/b.bin"))\n")

        let run = try await BraidCLI.run(["-i", list, "-d", fixture.output("").path, "-j", "1", "-n", "4", "-q"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        let first = Set(fixture.requests(to: "/a.bin").map(\.connection))
        let second = Set(fixture.requests(to: "/b.bin").map(\.connection))
        #expect(!first.isEmpty && !second.isEmpty)
        // The pool keeps the first download's connections alive: the second reuses them, or opens later ones.
        #expect(second.subtracting(first).allSatisfy { $0 > first.max()! }, "connections \(first) then \(second)")
        #expect(try content.firstDifference(fromFileAt: fixture.output("b.bin").path) == nil)
    }

    @Test(
        "two downloads of 4 connections from one host stay within the per-host or global cap",
        arguments: [
            (["--max-connections-per-host", "2"], 2),
            (["--max-connections", "2"], 2),
            ([], 16),
        ] as [([String], Int)]
    )
    func connectionCaps(caps: [String], cap: Int) async throws {
        let content = TestContent(seed: 6, size: 4 << 20)
        let throttle: [TestServer.Fault] = [.throttle(bytesPerSecond: 4 << 20)]
        let fixture = try Fixture(routes: [
            "/a.bin": .init(content: content, faults: throttle), "/b.bin": .init(content: content, faults: throttle),
        ])
        defer { fixture.shutdown() }
        let list = try fixture.list("\(fixture.server.url("/a.bin"))\n\(fixture.server.url("/b.bin"))\n")

        let run = try await BraidCLI.run(
            ["-i", list, "-d", fixture.output("").path, "-j", "2", "-n", "4", "-q", "--no-fsync"] + caps)

        #expect(run.status == .exited(0), "\(run.standardError)")
        // Connections are kept alive between pieces, so a download's distinct connections are at most as many as
        // it ever had open at once.
        for path in ["/a.bin", "/b.bin"] {
            let connections = Set(fixture.requests(to: path, method: "GET").map(\.connection))
            #expect(connections.count <= min(cap, 4), "\(path) used \(connections.count) connections, cap \(cap)")
            // Uncapped, its segments ran side by side; how many connections they took depends on whether one
            // found another's idle in the pool when it started.
            if cap >= 4 { #expect(connections.count >= 2, "uncapped, \(path) came over one connection") }
        }
        #expect(try content.firstDifference(fromFileAt: fixture.output("a.bin").path) == nil)
        #expect(try content.firstDifference(fromFileAt: fixture.output("b.bin").path) == nil)
    }

    @Test("by default (-j auto) a list of small files runs as many at once as the per-host cap has connections")
    func automaticConcurrency() async throws {
        // Every body holds after 64 KiB, until braid lets go: the downloads that start stay running.
        let content = TestContent(seed: 12, size: 1 << 20)
        let stall = TestServer.Route(content: content, faults: [.stall(afterBytes: 64 << 10)])
        let paths = (1...20).map { "/f\($0).bin" }
        let fixture = try Fixture(routes: Dictionary(uniqueKeysWithValues: paths.map { ($0, stall) }))
        defer { fixture.shutdown() }
        let list = try fixture.list(paths.map { fixture.server.url($0) }.joined(separator: "\n"))

        let run = try BraidCLI.start(
            [
                "-i", list, "-d", fixture.output("").path, "--max-connections-per-host", "4", "--no-fsync",
                // A held body is not a stalled one to replace: only the test's SIGINT ends it.
                "--stall-timeout", "600",
            ])
        defer { run.stop(signal: SIGKILL) }
        try await run.waitUntil("four files to be under way", timeout: .seconds(60)) {
            fixture.server.totalBodyBytesSent >= 4 * (64 << 10)
        }
        run.send(SIGINT)

        #expect(try await run.waitForExit(timeout: .seconds(20)) == .exited(130), "\(run.standardError)")
        #expect(fixture.server.totalBodyBytesSent == 4 * (64 << 10), "the 4 connections to the host, a file each")
        let summary = Self.summaryRows(run.standardError)
        #expect(paths.allSatisfy { summary[String($0.dropFirst())]?.hasPrefix("interrupted") == true }, "\(summary)")
        let got = paths.filter { !fixture.requests(to: $0, method: "GET").isEmpty }
        #expect(got == Array(paths.prefix(4)), "the first four, in list order: \(got)")
    }

    @Test("tab-separated mirrors share the segments, and a failing mirror is dropped")
    func mirrors() async throws {
        let content = TestContent(seed: 7, size: 4 << 20)
        let fixture = try Fixture(routes: [
            "/one/f.bin": .init(content: content, faults: [.throttle(bytesPerSecond: 4 << 20)]),
            "/two/f.bin": .init(content: content, faults: [.throttle(bytesPerSecond: 4 << 20)]),
            "/gone/f.bin": .init(content: content, faults: [.status(404, retryAfter: nil)]),
        ])
        defer { fixture.shutdown() }
        let server = fixture.server
        let list = try fixture.list(
            """
            \(server.url("/one/f.bin"))\t\(server.url("/two/f.bin"))
              out=shared.bin
            \(server.url("/one/f.bin"))\t\(server.url("/gone/f.bin"))
              out=survivor.bin
            """)

        let run = try await BraidCLI.run(["-i", list, "-d", fixture.output("").path, "-n", "4", "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try content.firstDifference(fromFileAt: fixture.output("shared.bin").path) == nil)
        #expect(try content.firstDifference(fromFileAt: fixture.output("survivor.bin").path) == nil)
        #expect(!fixture.requests(to: "/two/f.bin", method: "GET").isEmpty, "the mirror served segments")
    }

    /// Runs braid with `arguments`, sends SIGINT once each of the files `names` checkpointed progress, and returns
    /// what it wrote on stderr, expecting exit status 130.
    static func interrupt(_ arguments: [String], once names: [String], checkpointIn fixture: Fixture) async throws
        -> String
    {
        let run = try BraidCLI.start(arguments)
        defer { run.stop(signal: SIGKILL) }
        try await run.waitUntil("the running downloads to checkpoint progress", timeout: .seconds(30)) {
            names.allSatisfy {
                (ManifestFile(at: URL(fileURLWithPath: fixture.output($0).path + ".braid"))?.done ?? 0) > 0
            }
        }
        run.send(SIGINT)
        #expect(try await run.waitForExit(timeout: .seconds(20)) == .exited(130), "\(run.standardError)")
        return run.standardError
    }

    @Test("SIGINT interrupts every running download, never starts the queued ones, exits 130; the rerun resumes")
    func interruptAndResume() async throws {
        let content = TestContent(seed: 8, size: 2 << 20)
        let slow = TestServer.Route(content: content, faults: [.throttle(bytesPerSecond: 128 << 10)])
        let fixture = try Fixture(routes: ["/a.bin": slow, "/b.bin": slow, "/c.bin": slow])
        defer { fixture.shutdown() }
        let server = fixture.server
        let list = try fixture.list(["/a.bin", "/b.bin", "/c.bin"].map { server.url($0) }.joined(separator: "\n"))
        let arguments = ["-i", list, "-d", fixture.output("").path, "-j", "2", "-n", "2", "--no-fsync"]

        let interrupted = try await Self.interrupt(arguments, once: ["a.bin", "b.bin"], checkpointIn: fixture)
        let summary = Self.summaryRows(interrupted)
        #expect(summary["a.bin"]?.hasPrefix("interrupted") == true, "\(summary)")
        #expect(summary["c.bin"]?.hasPrefix("interrupted") == true, "\(summary)")
        #expect(fixture.requests(to: "/c.bin").isEmpty, "the queued download never started")

        for path in ["/a.bin", "/b.bin", "/c.bin"] { server.setRoute(path, .init(content: content)) }
        let second = try await BraidCLI.run(arguments)

        #expect(second.status == .exited(0), "\(second.standardError)")
        let again = Self.summaryRows(second.standardError)
        for name in ["a.bin", "b.bin"] {
            #expect(again[name]?.hasPrefix("completed (length verified; ") == true, "resumed: \(again)")
            #expect(again[name]?.contains(" resumed)") == true, "\(again)")
        }
        for name in ["a.bin", "b.bin", "c.bin"] {
            #expect(try content.firstDifference(fromFileAt: fixture.output(name).path) == nil, "\(name)")
        }
    }

    @Test("SIGINT on a long list tells of the running downloads, and counts the waiting ones in one line")
    func interruptLongList() async throws {
        let content = TestContent(seed: 8, size: 2 << 20)
        let slow = TestServer.Route(content: content, faults: [.throttle(bytesPerSecond: 128 << 10)])
        let paths = (1...25).map { "/f\($0).bin" }
        let fixture = try Fixture(routes: Dictionary(uniqueKeysWithValues: paths.map { ($0, slow) }))
        defer { fixture.shutdown() }
        let list = try fixture.list(paths.map { fixture.server.url($0) }.joined(separator: "\n"))

        let errors = try await Self.interrupt(
            ["-i", list, "-d", fixture.output("").path, "-j", "2", "-n", "2", "--no-fsync"],
            once: ["f1.bin", "f2.bin"],
            checkpointIn: fixture)
        #expect(errors.contains("23 more were interrupted before they started"), "\(errors)")
        #expect(!errors.contains("before it started"), "\(errors)")
        #expect(errors.contains("f1.bin: interrupted. Progress is saved"), "\(errors)")
        #expect(errors.contains("0 of 25 succeeded, 25 failed"), "\(errors)")
    }

    @Test(
        "two entries whose server-chosen names collide do not share one file, at once or one after the other",
        arguments: ["2", "1"]
    )
    func collidingNames(concurrent: String) async throws {
        // The same length: one after the other, the second must not take the first's file for its own.
        let one = TestContent(seed: 10, size: 2 << 20)
        let two = TestContent(seed: 11, size: 2 << 20)
        let fixture = try Fixture(routes: [
            "/one/f.bin": .init(content: one, faults: [.throttle(bytesPerSecond: 1 << 20)]),
            "/two/get": .init(
                content: two,
                faults: [.throttle(bytesPerSecond: 1 << 20), .contentDisposition(#"attachment; filename="f.bin""#)]
            ),
        ])
        defer { fixture.shutdown() }
        let server = fixture.server
        let list = try fixture.list("\(server.url("/one/f.bin"))\n\n\(server.url("/two/get"))\n")

        let run = try await BraidCLI.run(["-i", list, "-d", fixture.output("").path, "-j", concurrent, "-n", "2"])

        #expect(run.status == .exited(8), "\(run.standardError)")
        #expect(run.standardError.contains("out=NAME"), "\(run.standardError)")
        let refused = run.standardError.contains("line 3:") ? 3 : 1
        #expect(run.standardError.contains("line \(refused): "), "\(run.standardError)")
        #expect(run.standardError.contains("1 of 2 succeeded"), "\(run.standardError)")
        let kept = refused == 3 ? one : two
        #expect(try kept.firstDifference(fromFileAt: fixture.output("f.bin").path) == nil, "one intact file")
        #expect(!FileManager.default.fileExists(atPath: fixture.output("f.bin.part").path))
    }

    @Test("a retry's line names the file by the name the server gave it, where the URL names another")
    func retryLineNamesTheFile() async throws {
        // The first GET takes the first MiB whole; the rest's request is cut 1.5 MiB in, and retried.
        let content = TestContent(seed: 41, size: 3 << 20)
        let fixture = try Fixture(routes: [
            "/get": .init(
                content: content,
                faults: [.contentDisposition(#"attachment; filename="served.bin""#), .closeAfter(bytes: 3 << 19)])
        ])
        defer { fixture.shutdown() }
        let list = try fixture.list(fixture.server.url("/get") + "\n")

        let run = try await BraidCLI.run(["-i", list, "-d", fixture.output("").path, "-n", "1", "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try content.firstDifference(fromFileAt: fixture.output("served.bin").path) == nil)
        let retries = run.standardError.split(separator: "\n").filter { $0.contains("retrying in") }
        #expect(!retries.isEmpty, "\(run.standardError)")
        #expect(retries.allSatisfy { $0.hasPrefix("[1/1] served.bin: retrying in ") }, "\(retries)")
    }

    @Test("a list longer than a batch of downloads: every file right, once, and the summary counts them all")
    func longList() async throws {
        // Three batches and a part (`ListRunner.batchSize` is 256), made and submitted as the first ones run.
        let count = 700
        let contents = (0..<4).map { TestContent(seed: 20 + UInt64($0), size: 2 << 10) }
        var routes: [String: TestServer.Route] = [:]
        for (number, content) in contents.enumerated() { routes["/f\(number).bin"] = .init(content: content) }
        let fixture = try Fixture(routes: routes)
        defer { fixture.shutdown() }
        let list = try fixture.list(
            (0..<count).map { "\(fixture.server.url("/f\($0 % contents.count).bin"))\n  out=n\($0).bin\n" }.joined())

        let run = try await BraidCLI.run(["-i", list, "-d", fixture.output("").path, "-j", "16", "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(run.standardError.contains("\(count) of \(count) succeeded"), "\(run.standardError)")
        for number in 0..<count {
            let content = contents[number % contents.count]
            #expect(try content.firstDifference(fromFileAt: fixture.output("n\(number).bin").path) == nil)
        }
        #expect(fixture.server.waitUntilIdle())
        #expect(fixture.server.requestLog.count == count, "one request a file")
    }

    @Test("out= with subdirectories: each file below -d at its path, one request each, nothing left beside it")
    func outputPaths() async throws {
        let contents = (0..<3).map { TestContent(seed: 30 + UInt64($0), size: 8 << 10) }
        var routes: [String: TestServer.Route] = [:]
        for (number, content) in contents.enumerated() { routes["/f\(number).bin"] = .init(content: content) }
        let fixture = try Fixture(routes: routes)
        defer { fixture.shutdown() }
        // As a model repository's list: several files in each of directories that do not exist yet.
        let paths = (0..<12).map { "\(["tokenizer", "onnx/fp16", "onnx"][$0 % 3])/file-\($0).bin" }
        let list = try fixture.list(
            paths.enumerated().map { "\(fixture.server.url("/f\($0.offset % 3).bin"))\n  out=\($0.element)\n" }
                .joined())

        let run = try await BraidCLI.run(["-i", list, "-d", fixture.output("").path, "-j", "16", "--no-fsync", "-q"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        for (number, path) in paths.enumerated() {
            #expect(try contents[number % 3].firstDifference(fromFileAt: fixture.output(path).path) == nil, "\(path)")
        }
        let left = FileManager.default.enumerator(atPath: fixture.output("").path)?.allObjects as? [String] ?? []
        #expect(Set(left) == Set(paths + ["tokenizer", "onnx", "onnx/fp16"]), "\(left.sorted())")
        #expect(fixture.server.waitUntilIdle())
        #expect(fixture.server.requestLog.count == paths.count, "one request a file")
    }

    @Test(
        "two entries that would write one file are refused before any request: one path from dir= and out=, or one URL into one dir=",
        arguments: [
            ("/a\n out=x/f.bin\n/b\n dir=x\n out=f.bin\n", "line 3: out=x/f.bin is already on line 1"),
            ("/a\n dir=x\n/a\n dir=./x/\n", "line 3: URL is already on line 1"),
            ("/a\n/a\n", "line 2: URL is already on line 1"),
        ])
    func sameOutputRefused(list text: String, message: String) async throws {
        let fixture = try Fixture(routes: ["/a": .init(content: Self.good), "/b": .init(content: Self.good)])
        defer { fixture.shutdown() }
        // Each entry's URL line as the server's full URL.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("/") ? fixture.server.url(String(line)) : String(line)
        }
        let list = try fixture.list(lines.joined(separator: "\n"))

        let run = try await BraidCLI.run(["-i", list, "-d", fixture.output("").path, "-q"])

        #expect(run.status == .exited(2), "\(run.standardError)")
        let said = message.replacingOccurrences(of: "URL", with: fixture.server.url("/a"))
        #expect(run.standardError.contains(said + "; give it another out= name"), "\(run.standardError)")
        #expect(fixture.requests(to: "/a").isEmpty && fixture.requests(to: "/b").isEmpty)

        // The same URL into two directories, and one name in two directories, are two files.
        let apart = try fixture.list(
            [
                fixture.server.url("/a"), " dir=x", fixture.server.url("/a"), " dir=y", fixture.server.url("/b"),
                " out=y/b.bin", fixture.server.url("/b"), " out=b.bin", "",
            ].joined(separator: "\n"))
        let fine = try await BraidCLI.run(["-i", apart, "-d", fixture.output("").path, "-q", "--no-fsync"])
        #expect(fine.status == .exited(0), "\(fine.standardError)")
        for path in ["x/a", "y/a", "y/b.bin", "b.bin"] {
            #expect(try Self.good.firstDifference(fromFileAt: fixture.output(path).path) == nil, "\(path)")
        }
    }

    @Test("dir= and out= as a model repository's aria2c list gives them: each file at its path below -d")
    func directoryEntries() async throws {
        let contents = (0..<4).map { TestContent(seed: 50 + UInt64($0), size: 5 << 10) }
        let fixture = try Fixture(routes: [
            "/r/config.json": .init(content: contents[0]), "/r/onnx/model.onnx": .init(content: contents[1]),
            "/r/onnx/fp16/model.onnx": .init(content: contents[2]), "/r/text/vocab.txt": .init(content: contents[3]),
        ])
        defer { fixture.shutdown() }
        // As hfd.sh writes it: `dir=` empty or `.` for the root, the file's name in `out=`; the last entry has
        // no `out=`, its name the URL's.
        let url = { (path: String) in fixture.server.url("/r/" + path) }
        let list = try fixture.list(
            """
            \(url("config.json"))
             dir=
             out=config.json
            \(url("onnx/model.onnx"))
             dir=onnx
             out=model.onnx
            \(url("onnx/fp16/model.onnx"))
             dir=./onnx/fp16
             out=model.onnx
            \(url("text/vocab.txt"))
             dir=text

            """)

        let run = try await BraidCLI.run(["-i", list, "-d", fixture.output("").path, "-j", "4", "--no-fsync", "-q"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        let paths = ["config.json", "onnx/model.onnx", "onnx/fp16/model.onnx", "text/vocab.txt"]
        for (content, path) in zip(contents, paths) {
            #expect(try content.firstDifference(fromFileAt: fixture.output(path).path) == nil, "\(path)")
        }
        let left = FileManager.default.enumerator(atPath: fixture.output("").path)?.allObjects as? [String] ?? []
        #expect(Set(left) == Set(paths + ["onnx", "onnx/fp16", "text"]), "\(left.sorted())")

        // A dir= above -d is refused before any request.
        let escape = try fixture.list("\(url("config.json"))\n dir=../outside\n")
        let refused = try await BraidCLI.run(["-i", escape, "-d", fixture.output("").path, "-q"])
        #expect(refused.status == .exited(2), "\(refused.standardError)")
        #expect(refused.standardError.contains("has a '..' component"), "\(refused.standardError)")
        #expect(fixture.requests(to: "/r/config.json").count == 1, "only the first run's request")
    }

    @Test(
        "--checksum-file holds each file to the line of its path below -d: two of one name in two out= directories"
    )
    func checksumFilePaths() async throws {
        let contents = (0..<3).map { TestContent(seed: 40 + UInt64($0), size: 6 << 10) }
        let fixture = try Fixture(routes: [
            "/a.json": .init(content: contents[0]), "/b.json": .init(content: contents[1]),
            "/c.json": .init(content: contents[2]),
        ])
        defer { fixture.shutdown() }
        // As `sha256sum` writes it in the repository's root: two files called config.json, the third one's line
        // wrong, and a line of a file of that name in a directory the list does not use.
        let wrong = TestContent(seed: 49, size: 6 << 10)
        let sums = fixture.directory.appending("SHA256SUMS").path
        try Data(
            """
            \(contents[0].hexDigest(.sha256))  ./text/config.json
            \(contents[1].hexDigest(.sha256))  ./vision/config.json
            \(wrong.hexDigest(.sha256))  ./audio/config.json
            \(wrong.hexDigest(.sha256))  ./other/config.json

            """.utf8
        ).write(to: URL(fileURLWithPath: sums))
        let list = try fixture.list(
            """
            \(fixture.server.url("/a.json"))
              out=text/config.json
            \(fixture.server.url("/b.json"))
              out=vision/config.json
            \(fixture.server.url("/c.json"))
              out=audio/config.json

            """)

        let run = try await BraidCLI.run([
            "-i", list, "-d", fixture.output("").path, "--checksum-file", sums, "-j", "3", "--no-fsync",
        ])

        #expect(run.status == .exited(6), "only the wrong line's file fails its digest: \(run.standardError)")
        #expect(try contents[0].firstDifference(fromFileAt: fixture.output("text/config.json").path) == nil)
        #expect(try contents[1].firstDifference(fromFileAt: fixture.output("vision/config.json").path) == nil)
        #expect(!FileManager.default.fileExists(atPath: fixture.output("audio/config.json").path))
        #expect(run.standardError.components(separatedBy: "sha-256 verified against checksum-file").count == 3)
    }

    @Test(
        "a small file's requests: one for a missing file, and --max-tries in all for a busy one, the first GET counted"
    )
    func smallFileRequests() async throws {
        let content = TestContent(seed: 30, size: 4 << 10)
        let fixture = try Fixture(routes: [
            "/busy.bin": .init(content: content, faults: [.status(503, retryAfter: 0)]),
            "/fine.bin": .init(content: content),
        ])
        defer { fixture.shutdown() }
        let list = try fixture.list(
            ["/busy.bin", "/missing.bin", "/fine.bin"].map { "\(fixture.server.url($0))\n" }.joined())

        let run = try await BraidCLI.run(["-i", list, "-d", fixture.output("").path, "--max-tries", "3", "--no-fsync"])

        // Both failures are the server's (5, as a single download's would be).
        #expect(run.status == .exited(5), "\(run.standardError)")
        #expect(run.standardError.contains("gave up after 3 attempts"), "\(run.standardError)")
        #expect(run.standardError.contains("404"), "\(run.standardError)")
        #expect(fixture.requests(to: "/busy.bin").count == 3, "three attempts in all")
        #expect(fixture.requests(to: "/missing.bin").count == 1, "a 404 is not asked again")
        #expect(fixture.requests(to: "/fine.bin").count == 1)
        #expect(try content.firstDifference(fromFileAt: fixture.output("fine.bin").path) == nil)
    }

    @Test(
        "failures leave no file that holds no downloaded byte, and keep the partial data and manifest that hold some"
    )
    func failuresLeaveNoEmptyFiles() async throws {
        let content = TestContent(seed: 31, size: 2 << 20)
        let fromSecondRequest: (TestServer.Fault) -> [TestServer.Fault] = { [.afterFirst(requests: 1, $0)] }
        let fixture = try Fixture(routes: [
            // Every range past the first is refused with 416, as if the file changed: restarts until they run out.
            "/changing.bin": .init(content: content, faults: [.claimLength(String(3 << 20))]),
            // The probe (a conditional GET, for -N) is answered; the GET of the file is not.
            "/gone.bin": .init(content: content, faults: fromSecondRequest(.status(404, retryAfter: nil))),
            "/cut.bin": .init(content: content, faults: fromSecondRequest(.closeAfter(bytes: 0))),
            // Every response ends 100 bytes short: the bytes before are what a rerun resumes from.
            "/kept.bin": .init(content: TestContent(seed: 32, size: 5 << 20), faults: [.shortBody(missingBytes: 100)]),
        ])
        defer { fixture.shutdown() }
        let older = Date(timeIntervalSince1970: 946_684_800)
        for name in ["gone.bin", "cut.bin"] {
            try Data("older".utf8).write(to: fixture.output(name))
            try FileManager.default.setAttributes([.modificationDate: older], ofItemAtPath: fixture.output(name).path)
        }
        let list = try fixture.list(
            ["/changing.bin", "/gone.bin", "/cut.bin"].map { "\(fixture.server.url($0))\n" }.joined()
                + "\(fixture.server.url("/kept.bin"))\n")

        let run = try await BraidCLI.run([
            "-i", list, "-d", fixture.output("").path, "-N", "--max-tries", "1", "--no-fsync",
        ])

        #expect(run.status == .exited(5), "\(run.standardError)")
        #expect(run.standardError.contains("0 of 4 succeeded"), "\(run.standardError)")
        let left = try FileManager.default.contentsOfDirectory(atPath: fixture.output("").path).sorted()
        #expect(left == ["cut.bin", "gone.bin", "kept.bin.braid", "kept.bin.part"], "\(run.standardError)")
        let manifest = try #require(ManifestFile(at: fixture.output("kept.bin.braid")))
        #expect(manifest.done > 0, "the bytes received are recorded")
    }

    @Test("a list on standard input works like a list file")
    func standardInput() async throws {
        let content = TestContent(seed: 9, size: 512 << 10)
        let fixture = try Fixture(routes: ["/in.bin": .init(content: content)])
        defer { fixture.shutdown() }
        let list = try fixture.list("\(fixture.server.url("/in.bin"))\n  out=from-stdin.bin\n")

        let run = try await ChildProcess.run(
            "/bin/sh", ["-c", "exec \"$0\" -i - -d \"$1\" -q < \"$2\"", BraidCLI.path, fixture.output("").path, list])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try content.firstDifference(fromFileAt: fixture.output("from-stdin.bin").path) == nil)
    }

    @Test(
        "a bad list or bad list arguments fail with one line before any network traffic",
        arguments: [
            ("https://example.org/a\n  speed=9\n", [], Int32(2), "line 2"),
            ("# nothing\n", [], 2, "no URLs"),
            ("\u{FEFF}# nothing, from a Windows editor\r\n", [], 2, "no URLs"),
            ("http://h/a\n  out=x\nhttp://h/b\n  out=x\n", [], 2, "line 3"),
            ("http://h/a\n", ["-o", "x"], 2, "-d DIR"),
            ("http://h/a\n", ["--checksum", "md5=00112233445566778899aabbccddeeff"], 2, "checksum="),
            ("http://h/a\n", ["-j", "0"], 2, "-j"),
            ("http://h/a\n", ["http://h/b"], 2, "not both"),
            ("http://h/a\0junk\n", [], 2, "line 1 of the list has a NUL byte"),
            ("http://h/a\nthis is garbage\nftp://h/x\n", [], 2, "line 2: 'this is garbage' is not a valid URL"),
            ("http://h/a\nhttp://h/\(String(repeating: "b", count: 70_000))\n", [], 2, "line 2 of the list is longer"),
        ] as [(String, [String], Int32, String)]
    )
    func badList(text: String, extra: [String], status: Int32, message: String) async throws {
        let directory = try TemporaryDirectory(prefix: "braid-list")
        defer { directory.remove() }
        let list = directory.appending("list.txt")
        try Data(text.utf8).write(to: list)

        let run = try await BraidCLI.run(["-i", list.path, "-d", directory.url.path] + extra)

        #expect(run.status == .exited(status), "\(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count == 1, "one line: \(run.standardError)")
        #expect(run.standardError.contains(message), "\(run.standardError)")
    }

    @Test("a missing list file is a local I/O error (3); no URL and no list is a usage error (2)")
    func missingList() async throws {
        let missing = try await BraidCLI.run(["-i", "/nonexistent/list.txt"])
        #expect(missing.status == .exited(3), "\(missing.standardError)")
        #expect(missing.standardError.contains("/nonexistent/list.txt"))

        let nothing = try await BraidCLI.run([])
        #expect(nothing.status == .exited(2), "\(nothing.standardError)")
        #expect(nothing.standardError.contains("-i FILE"))
    }

    /// The summary table's rows: file name → the rest of the row.
    static func summaryRows(_ standardError: String) -> [String: String] {
        let lines = standardError.split(separator: "\n").map(String.init)
        guard let header = lines.lastIndex(where: { $0.hasPrefix("file ") && $0.contains("outcome") }) else {
            return [:]
        }
        var rows: [String: String] = [:]
        for line in lines[(header + 1)...] {
            let columns = line.split(separator: " ", maxSplits: 1)
            guard columns.count == 2, !line.hasPrefix(" ") else { break }
            rows[String(columns[0])] = columns[1].trimmingCharacters(in: .whitespaces)
        }
        return rows
    }
}
