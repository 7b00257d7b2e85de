import BraidTestServer
import Foundation
import Testing

/// The fault-injecting server checked against an independent client, the system `curl`: correct by default,
/// and each fault visible exactly as documented.
///
/// Each test gets its own server on a free port (started in `init`, shut down in `deinit`, whatever the test's
/// outcome) and its own scratch directory.
@Suite("TestServer")
final class TestServerTests {
    let server = TestServer()
    let directory: URL
    /// The content most tests serve at `/file`: larger than one 64 KiB write, not a multiple of 8.
    let content = TestContent(seed: 3, size: 100_003)

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("braid-test-server-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try server.start()
    }

    deinit {
        server.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A path in the scratch directory for curl's `-o`.
    func file(_ name: String = "body") -> String {
        directory.appendingPathComponent(name).path
    }

    /// The bytes curl wrote to `path`.
    func bytes(at path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Serves ``content`` at `/file` with `faults`, and returns its URL.
    @discardableResult
    func serve(_ faults: [TestServer.Fault] = []) -> String {
        server.setRoute("/file", TestServer.Route(content: content, faults: faults))
        return server.url("/file")
    }

    /// The log once every response a client received has been recorded.
    func settledLog() -> [TestServer.RequestRecord] {
        #expect(server.waitUntilIdle())
        return server.requestLog
    }

    // MARK: - Correct by default

    @Test(
        "A GET returns the whole content, for sizes around word and buffer boundaries",
        arguments: [0, 1, 7, 8, 9, 65_537, 1_000_003] as [UInt64])
    func fullGet(size: UInt64) async throws {
        let content = TestContent(seed: size, size: size)
        server.setRoute("/sized", TestServer.Route(content: content))
        let run = try await CurlRun(["-D", "-", "-o", file(), server.url("/sized")])
        #expect(run.exitCode == 0)
        #expect(run.status == 200)
        #expect(run.header("Content-Length") == String(size))
        #expect(run.header("Accept-Ranges") == "bytes")
        #expect(run.header("ETag") == content.entityTag)
        #expect(run.header("Last-Modified") == content.lastModified)
        #expect(try content.firstDifference(fromFileAt: file()) == nil)
        #expect(settledLog().map(\.bodyBytesSent) == [size])
    }

    @Test(
        "A single range returns 206 with exactly those bytes",
        arguments: [
            ("0-99", 0..<100), ("99950-", 99_950..<100_003), ("-25", 99_978..<100_003),
            ("99990-200000", 99_990..<100_003),
        ] as [(String, Range<UInt64>)]
    )
    func range(spec: String, expected: Range<UInt64>) async throws {
        let run = try await CurlRun(["-D", "-", "-o", file(), "-r", spec, serve()])
        #expect(run.status == 206)
        #expect(run.header("Content-Range") == "bytes \(expected.lowerBound)-\(expected.upperBound - 1)/100003")
        #expect(try bytes(at: file()) == content.bytes(in: expected))
        #expect(settledLog().map(\.range) == ["bytes=\(spec)"])
    }

    @Test("A range starting at or past the end is 416 with the total length", arguments: [0, 100_003] as [UInt64])
    func unsatisfiableRange(size: UInt64) async throws {
        server.setRoute("/sized", TestServer.Route(size: size))
        let run = try await CurlRun(["-D", "-", "-o", file(), "-r", "\(size)-", server.url("/sized")])
        #expect(run.status == 416)
        #expect(run.header("Content-Range") == "bytes */\(size)")
    }

    @Test("Offsets past 4 GiB are served without storing the content")
    func beyondFourGiB() async throws {
        let content = TestContent(seed: 11, size: 5 << 30)
        server.setRoute("/huge", TestServer.Route(content: content))
        let head = try await CurlRun(["-I", server.url("/huge")])
        #expect(head.header("Content-Length") == "5368709120")
        for (spec, expected) in [
            ("4294967290-4294967309", (1 << 32) - 6..<(1 << 32) + 14), ("-16", (5 << 30) - 16..<(5 << 30)),
        ]
            as [(String, Range<UInt64>)]
        {
            let run = try await CurlRun(["-D", "-", "-o", file(), "-r", spec, server.url("/huge")])
            #expect(run.header("Content-Range") == "bytes \(expected.lowerBound)-\(expected.upperBound - 1)/5368709120")
            #expect(try bytes(at: file()) == content.bytes(in: expected))
        }
    }

    @Test(
        "If-Range keeps the range only when it matches the current validator",
        arguments: [
            (TestContent(seed: 3, size: 100_003).entityTag, 206), ("\"braid-other\"", 200),
            ("W/" + TestContent(seed: 3, size: 100_003).entityTag, 200),
            (TestContent(seed: 3, size: 100_003).lastModified, 206), ("Thu, 01 Jan 1970 00:00:00 GMT", 200),
        ]
    )
    func ifRange(validator: String, expectedStatus: Int) async throws {
        let run = try await CurlRun(["-D", "-", "-o", file(), "-r", "0-99", "-H", "If-Range: \(validator)", serve()])
        #expect(run.status == expectedStatus)
        #expect(try bytes(at: file()).count == (expectedStatus == 206 ? 100 : 100_003))
        #expect(settledLog().map(\.ifRange) == [validator])
    }

    @Test(
        "If-None-Match naming the entity tag, or else an If-Modified-Since no earlier than Last-Modified, gets 304",
        arguments: [
            (["If-Modified-Since: \(TestContent(seed: 3, size: 1).lastModified)"], 304),
            (["If-Modified-Since: \(TestContent(seed: 4, size: 1).lastModified)"], 304),
            (["If-Modified-Since: \(TestContent(seed: 2, size: 1).lastModified)"], 200),
            (["If-Modified-Since: not a date"], 200),
            (["If-None-Match: \(TestContent(seed: 3, size: 100_003).entityTag)"], 304),
            (
                ["If-None-Match: \"braid-other\"", "If-Modified-Since: \(TestContent(seed: 3, size: 1).lastModified)"],
                200
            ),
        ]
    )
    func conditionalGet(headers: [String], expectedStatus: Int) async throws {
        let run = try await CurlRun(["-D", "-", "-o", file()] + headers.flatMap { ["-H", $0] } + [serve()])
        #expect(run.status == expectedStatus)
        // curl creates no file for a response without a body.
        #expect(((try? bytes(at: file()))?.count ?? 0) == (expectedStatus == 304 ? 0 : 100_003))
        if expectedStatus == 304 { #expect(run.header("ETag") == content.entityTag) }
        #expect(settledLog().map(\.status) == [expectedStatus])
    }

    @Test("ignoreConditionals answers 200 whatever the conditions; noLastModified sends no date and never 304")
    func conditionalFaults() async throws {
        let since = "If-Modified-Since: \(content.lastModified)"
        let ignoring = try await CurlRun(["-D", "-", "-o", file(), "-H", since, serve([.ignoreConditionals])])
        #expect(ignoring.status == 200)
        let undated = try await CurlRun(["-D", "-", "-o", file(), "-H", since, serve([.noLastModified])])
        #expect(undated.status == 200)
        #expect(undated.header("Last-Modified") == nil)
        #expect(settledLog().map(\.ifModifiedSince) == [content.lastModified, content.lastModified])
    }

    @Test("Requests on one connection are kept alive and logged one by one")
    func keepAlive() async throws {
        let url = serve()
        let run = try await CurlRun([
            "-o", file("first"), url, "--next", "--silent", "-r", "0-9", "-o", file("second"), url,
        ])
        #expect(run.exitCode == 0)
        let log = settledLog()
        #expect(server.connectionsAccepted == 1)
        #expect(log.map(\.status) == [200, 206])
        #expect(log.map(\.bodyBytesSent) == [100_003, 10])
        #expect(log.map(\.connection) == [1, 1])
        #expect(server.totalBodyBytesSent == 100_013)
    }

    @Test(
        "Digests of the content agree with the coreutils tools", arguments: TestContent.DigestAlgorithm.allCases,
        [0, 1_000_003] as [UInt64])
    func digests(algorithm: TestContent.DigestAlgorithm, size: UInt64) async throws {
        let content = TestContent(seed: 5, size: size)
        server.setRoute("/sized", TestServer.Route(content: content))
        #expect(try await CurlRun(["-o", file(), server.url("/sized")]).exitCode == 0)
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        tool.arguments = ["\(algorithm.rawValue)sum", file()]
        let output = Pipe()
        tool.standardOutput = output
        try tool.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        tool.waitUntilExit()
        #expect(printed.split(separator: " ").first.map(String.init) == content.hexDigest(algorithm))
    }

    @Test("firstDifference points at the first wrong byte, or the shorter length")
    func firstDifference() async throws {
        var bytes = content.bytes(in: 0..<100_003)
        try Data(bytes).write(to: URL(fileURLWithPath: file()))
        #expect(try content.firstDifference(fromFileAt: file()) == nil)
        bytes[70_000] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: file()))
        #expect(try content.firstDifference(fromFileAt: file()) == 70_000)
        try Data(bytes.prefix(5)).write(to: URL(fileURLWithPath: file()))
        #expect(try content.firstDifference(fromFileAt: file()) == 5)
    }

    // MARK: - Pacing

    @Test("Throttling paces the body")
    func throttle() async throws {
        let url = serve([.throttle(bytesPerSecond: 200_000)])
        let start = ContinuousClock.now
        #expect(try await CurlRun(["-o", file(), url]).exitCode == 0)
        #expect(start.duration(to: .now) >= .milliseconds(450))
        #expect(try content.firstDifference(fromFileAt: file()) == nil)
    }

    @Test("Latency delays the first byte")
    func latency() async throws {
        let run = try await CurlRun([
            "-o", file(), "-w", "%{time_starttransfer}", serve([.latency(.milliseconds(500))]),
        ])
        #expect((Double(run.writtenOut) ?? 0) >= 0.45)
    }

    @Test("Latency delays every request, not only a connection's first")
    func latencyPerRequest() async throws {
        let url = serve([.latency(.milliseconds(300))])
        let run = try await CurlRun(
            ["-o", file("first"), "-w", "%{time_starttransfer}\n", url]
                + ["--next", "--silent", "-r", "0-9", "-o", file("second"), "-w", "%{time_starttransfer}\n", url])
        #expect(run.exitCode == 0)
        let firstBytes = run.writtenOut.split(separator: "\n").compactMap { Double($0) }
        #expect(firstBytes.count == 2)
        #expect(firstBytes.allSatisfy { $0 >= 0.28 })
        #expect(settledLog().map(\.connection) == [1, 1])
    }

    @Test("A total throttle caps the route's connections together, and they take turns")
    func totalThrottle() async throws {
        let size: UInt64 = 2 << 20
        let quarter = size / 4
        server.setRoute(
            "/file",
            TestServer.Route(
                content: TestContent(seed: 9, size: size), faults: [.totalThrottle(bytesPerSecond: 1 << 20)]))
        let url = server.url("/file")
        let transfers = (0..<4).map { index in
            let range = "\(UInt64(index) * quarter)-\(UInt64(index + 1) * quarter - 1)"
            return ["-r", range, "-o", file("part\(index)"), "-w", "%{time_total}\n", url]
        }
        let start = ContinuousClock.now
        let run = try await CurlRun(
            ["--parallel", "--parallel-immediate", "--parallel-max", "4"]
                + transfers.joined(separator: ["--next", "--silent", "--show-error"]))
        let elapsed = start.duration(to: .now)
        #expect(run.exitCode == 0)
        // 2 MiB at 1 MiB/s all together: at least about 2 s however many connections ask, less a slice of burst.
        #expect(elapsed >= .milliseconds(1700))
        // Taking turns, each quarter finishes near the end; served one after another, the first would take 0.5 s.
        let times = run.writtenOut.split(separator: "\n").compactMap { Double($0) }
        #expect(times.count == 4)
        #expect(times.allSatisfy { $0 >= 1.4 })
        #expect(Set(settledLog().map(\.connection)).count == 4)
        #expect(server.totalBodyBytesSent == size)
    }

    @Test("The chosen connection is much slower than the others")
    func slowConnection() async throws {
        let url = serve([.slowConnection(number: 2, bytesPerSecond: 20_000)])
        let first = try await CurlRun(["-o", file(), "-r", "0-9999", "-w", "%{time_total}", url])
        let second = try await CurlRun(["-o", file(), "-r", "0-9999", "-w", "%{time_total}", url])
        let fast = Double(first.writtenOut) ?? .infinity
        let slow = Double(second.writtenOut) ?? 0
        #expect(slow >= 0.4)
        #expect(fast < slow)
        #expect(settledLog().map(\.connection) == [1, 2])
    }

    // MARK: - Broken bodies

    @Test("A stalled body keeps the connection open until the client gives up")
    func stall() async throws {
        let run = try await CurlRun(["--max-time", "1", "-o", file(), serve([.stall(afterBytes: 1000)])])
        #expect(run.exitCode == 28)
        #expect(try bytes(at: file()) == content.bytes(in: 0..<1000))
        #expect(settledLog().map(\.bodyBytesSent) == [1000])
    }

    @Test(
        "A body cut short ends in a closed connection and curl's partial-file error",
        arguments: [(TestServer.Fault.closeAfter(bytes: 1000), 1000), (.shortBody(missingBytes: 10), 99_993)]
            as [(TestServer.Fault, Int)]
    )
    func truncatedBody(fault: TestServer.Fault, received: Int) async throws {
        let run = try await CurlRun(["-D", "-", "-o", file(), serve([fault])])
        #expect(run.exitCode == 18)
        #expect(run.header("Content-Length") == "100003")
        #expect(try bytes(at: file()) == content.bytes(in: 0..<UInt64(received)))
    }

    @Test("A fault scoped to the first requests lets a retry succeed")
    func onlyFirst() async throws {
        let url = serve([.onlyFirst(requests: 1, .closeAfter(bytes: 1000))])
        #expect(try await CurlRun(["-o", file(), url]).exitCode == 18)
        #expect(try await CurlRun(["-o", file(), url]).exitCode == 0)
        #expect(try content.firstDifference(fromFileAt: file()) == nil)
        #expect(settledLog().map(\.bodyBytesSent) == [1000, 100_003])
    }

    @Test("A fault scoped after the first requests meets only the retries")
    func afterFirst() async throws {
        let url = serve([.afterFirst(requests: 1, .wrongBytes)])
        #expect(try await CurlRun(["-o", file(), url]).exitCode == 0)
        #expect(try content.firstDifference(fromFileAt: file()) == nil)
        #expect(try await CurlRun(["-o", file(), url]).exitCode == 0)
        #expect(try content.firstDifference(fromFileAt: file()) != nil, "the second request got other bytes")
    }

    @Test("Extra bytes are sent past Content-Length")
    func extraBytes() async throws {
        let run = try await CurlRun(["-o", file(), "-r", "0-99", serve([.extraBytes(count: 10)])])
        #expect(run.exitCode == 0)
        #expect(try bytes(at: file()) == content.bytes(in: 0..<100))
        #expect(settledLog().map(\.bodyBytesSent) == [110])
    }

    // MARK: - Wrong ranges

    @Test("Ignoring Range answers 200 with the whole body")
    func ignoreRange() async throws {
        let run = try await CurlRun(["-D", "-", "-o", file(), "-r", "0-99", serve([.ignoreRange])])
        #expect(run.status == 200)
        #expect(run.header("Content-Range") == nil)
        #expect(try content.firstDifference(fromFileAt: file()) == nil)
    }

    @Test("A shifted range is honestly labelled")
    func shiftRange() async throws {
        let run = try await CurlRun(["-D", "-", "-o", file(), "-r", "0-99", serve([.shiftRange(offsetBy: 50)])])
        #expect(run.status == 206)
        #expect(run.header("Content-Range") == "bytes 50-149/100003")
        #expect(try bytes(at: file()) == content.bytes(in: 50..<150))
    }

    @Test("Wrong bytes come under the asked-for Content-Range")
    func wrongBytes() async throws {
        let run = try await CurlRun(["-D", "-", "-o", file(), "-r", "0-99", serve([.wrongBytes])])
        #expect(run.header("Content-Range") == "bytes 0-99/100003")
        let received = try bytes(at: file())
        #expect(received.count == 100)
        #expect(received != content.bytes(in: 0..<100))
    }

    /// ``content``'s bytes in `range` as a route corrupting `corrupted` sends them: those bytes XOR 0xFF.
    func corrupted(_ range: Range<UInt64>, altering corrupted: Range<UInt64>) -> [UInt8] {
        var bytes = content.bytes(in: range)
        for offset in range.clamped(to: corrupted) {
            bytes[Int(offset - range.lowerBound)] ^= 0xFF
        }
        return bytes
    }

    @Test("A range corrupted always is altered in every body that carries any of it, under true headers")
    func corruptAlways() async throws {
        let url = serve([.corrupt(bytes: 1000..<3000, once: false)])
        let before = try await CurlRun(["-o", file(), "-r", "0-99", url])
        #expect(before.exitCode == 0)
        #expect(try bytes(at: file()) == content.bytes(in: 0..<100), "a body outside the range is correct")
        let partly = try await CurlRun(["-D", "-", "-o", file(), "-r", "2000-4999", url])
        #expect(partly.header("Content-Length") == "3000")
        #expect(partly.header("ETag") == content.entityTag)
        #expect(try bytes(at: file()) == corrupted(2000..<5000, altering: 1000..<3000))
        #expect(try await CurlRun(["-o", file(), url]).exitCode == 0)
        #expect(try bytes(at: file()) == corrupted(0..<content.size, altering: 1000..<3000))
        #expect(settledLog().map(\.range) == ["bytes=0-99", "bytes=2000-4999", nil])
    }

    @Test("A range corrupted once is altered only in the first body that carries any of it")
    func corruptOnce() async throws {
        let url = serve([.corrupt(bytes: 1000..<3000, once: true)])
        #expect(try await CurlRun(["-o", file(), "-r", "0-99", url]).exitCode == 0)
        #expect(try bytes(at: file()) == content.bytes(in: 0..<100), "a body outside the range does not count")
        #expect(try await CurlRun(["-o", file(), "-r", "2500-3499", url]).exitCode == 0)
        #expect(try bytes(at: file()) == corrupted(2500..<3500, altering: 1000..<3000))
        #expect(try await CurlRun(["-o", file(), url]).exitCode == 0)
        #expect(try content.firstDifference(fromFileAt: file()) == nil)
        #expect(settledLog().map(\.range) == ["bytes=0-99", "bytes=2500-3499", nil])
    }

    // MARK: - Refusals

    @Test(
        "A forced status carries Retry-After, and can apply to the first requests only",
        arguments: [(503, 2), (429, 5)])
    func status(code: Int, retryAfter: Int) async throws {
        let url = serve([.onlyFirst(requests: 1, .status(code, retryAfter: retryAfter))])
        let refused = try await CurlRun(["-D", "-", "-o", file(), url])
        #expect(refused.status == code)
        #expect(refused.header("Retry-After") == String(retryAfter))
        #expect(try await CurlRun(["-D", "-", "-o", file(), url]).status == 200)
    }

    @Test("A forced status can carry any raw Retry-After value", arguments: ["99999999999999999999999", "-1"])
    func rawRetryAfter(value: String) async throws {
        let refused = try await CurlRun([
            "-D", "-", "-o", file(), serve([.statusRawRetryAfter(503, retryAfter: value)]),
        ])
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == value)
    }

    @Test("HEAD can be refused while GET works")
    func refuseHead() async throws {
        let url = serve([.refuseHead])
        #expect(try await CurlRun(["-I", url]).status == 405)
        #expect(try await CurlRun(["-D", "-", "-o", file(), url]).status == 200)
    }

    @Test("Requests beyond the per-client limit get 503 while the others are served")
    func limitConnections() async throws {
        let url = serve([.limitConnections(perClient: 1, retryAfter: 3), .throttle(bytesPerSecond: 100_000)])
        let run = try await CurlRun(
            ["--parallel", "--parallel-immediate", "-w", "%{http_code}\\n"]
                + (1...3).flatMap { ["-o", file("part\($0)"), url] }
        )
        #expect(run.writtenOut.split(separator: "\n").sorted() == ["200", "503", "503"])
        #expect(server.connectionsAccepted == 3)
    }

    // MARK: - Framing and metadata

    @Test("Without Content-Length the body is still complete", arguments: [TestServer.Fault.closeDelimited, .chunked])
    func framing(fault: TestServer.Fault) async throws {
        let run = try await CurlRun(["-D", "-", "-o", file(), serve([fault])])
        #expect(run.exitCode == 0)
        #expect(run.header("Content-Length") == nil)
        #expect(run.header("Transfer-Encoding") == (fault == .chunked ? "chunked" : nil))
        #expect(try content.firstDifference(fromFileAt: file()) == nil)
    }

    @Test("HEAD can report a length that GET's Content-Range contradicts")
    func headContentLength() async throws {
        let url = serve([.headContentLength(42)])
        #expect(try await CurlRun(["-I", url]).header("Content-Length") == "42")
        #expect(
            try await CurlRun(["-D", "-", "-o", file(), "-r", "0-9", url]).header("Content-Range") == "bytes 0-9/100003"
        )
    }

    @Test("A claimed length replaces Content-Length on HEAD and the total of Content-Range, not the bytes")
    func claimLength() async throws {
        let url = serve([.claimLength("9223372036854775807")])
        #expect(try await CurlRun(["-I", url]).header("Content-Length") == "9223372036854775807")
        let ranged = try await CurlRun(["-D", "-", "-o", file(), "-r", "0-9", url])
        #expect(ranged.header("Content-Range") == "bytes 0-9/9223372036854775807")
        #expect(ranged.header("Content-Length") == "10")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file())) == Data(content.bytes(in: 0..<10)))
    }

    @Test("Content changes after N requests, with new validators")
    func changeContentAfterRequests() async throws {
        let url = serve([.changeContent(afterRequests: 1, seed: 9)])
        let first = try await CurlRun(["-D", "-", "-o", file(), url])
        let second = try await CurlRun(["-D", "-", "-o", file(), url])
        let changed = TestContent(seed: 9, size: 100_003)
        #expect(first.header("ETag") == content.entityTag)
        #expect(second.header("ETag") == changed.entityTag)
        #expect(second.header("Last-Modified") == changed.lastModified)
        #expect(try changed.firstDifference(fromFileAt: file()) == nil)
    }

    @Test("Content changed between two runs turns a stale If-Range into a full 200")
    func changeContentOnDemand() async throws {
        let url = serve()
        server.changeContent(path: "/file", seed: 4)
        let run = try await CurlRun([
            "-D", "-", "-o", file(), "-r", "0-99", "-H", "If-Range: \(content.entityTag)", url,
        ])
        #expect(run.status == 200)
        #expect(try TestContent(seed: 4, size: 100_003).firstDifference(fromFileAt: file()) == nil)
    }

    // MARK: - Redirects

    @Test("A redirect to itself loops until curl gives up")
    func redirectLoop() async throws {
        server.setRoute("/loop", TestServer.Route(size: 10, faults: [.redirect(status: 302, to: .path("/loop"))]))
        let run = try await CurlRun(["-L", "--max-redirs", "5", "-o", file(), server.url("/loop")])
        #expect(run.exitCode == 47)
    }

    @Test("A redirect to another path is followed to the content", arguments: [301, 302, 307])
    func redirectToPath(status: Int) async throws {
        serve()
        server.setRoute("/moved", TestServer.Route(size: 10, faults: [.redirect(status: status, to: .path("/file"))]))
        let run = try await CurlRun(["-L", "-D", "-", "-o", file(), server.url("/moved")])
        #expect(run.responses.count == 2)
        #expect(run.responses.first?.first?.name.contains(String(status)) == true)
        #expect(try content.firstDifference(fromFileAt: file()) == nil)
        #expect(settledLog().map(\.target) == ["/moved", "/file"])
    }

    @Test("A redirect can point at a non-HTTP scheme")
    func redirectToFileScheme() async throws {
        server.setRoute(
            "/evil", TestServer.Route(size: 10, faults: [.redirect(status: 302, to: .location("file:///etc/passwd"))]))
        let run = try await CurlRun(["-D", "-", "-o", file(), server.url("/evil")])
        #expect(run.status == 302)
        #expect(run.header("Location") == "file:///etc/passwd")
    }

    // MARK: - Signed URLs

    @Test("A minted signed URL serves the content, ranges too, to GET; HEAD and an unsigned request get 403")
    func signedURLServesGet() async throws {
        serve([.requireSignedURL])
        server.setRoute(
            // Valid for an hour: a clean clone's run starts a thousand tests on two cores, and once took more
            // than a minute from minting this URL to its last request.
            "/sign", TestServer.Route(size: 0, faults: [.mintSignedURL(path: "/file", validFor: .seconds(3600))]))
        let whole = try await CurlRun(["-L", "-o", file(), server.url("/sign")])
        #expect(whole.exitCode == 0)
        #expect(try content.firstDifference(fromFileAt: file()) == nil)
        let range = try await CurlRun(["-L", "-D", "-", "-r", "10-19", "-o", file("range"), server.url("/sign")])
        #expect(range.status == 206)
        #expect(try bytes(at: file("range")) == content.bytes(in: 10..<20))
        let head = try await CurlRun(["-L", "-I", server.url("/sign")])
        #expect(head.status == 403)
        let unsigned = try await CurlRun(["-D", "-", "-o", file("unsigned"), server.url("/file")])
        #expect(unsigned.status == 403)
        let log = settledLog()
        #expect(log.filter { $0.target == "/sign" }.map(\.status) == [302, 302, 302])
        #expect(log.filter { $0.target.hasPrefix("/file?expires=") }.map(\.status) == [200, 206, 403])
    }

    @Test("A signed URL past its expiry, or with its expiry or signature altered, gets 403")
    func expiredOrForgedSignedURL() async throws {
        serve([.requireSignedURL])
        server.setRoute("/expired", TestServer.Route(size: 0, faults: [.mintSignedURL(path: "/file", validFor: .zero)]))
        server.setRoute(
            "/sign", TestServer.Route(size: 0, faults: [.mintSignedURL(path: "/file", validFor: .seconds(60))]))
        let expired = try await CurlRun(["-L", "-D", "-", "-o", file(), server.url("/expired")])
        #expect(expired.status == 403, "\(String(decoding: expired.output, as: UTF8.self))")
        let minted = try await CurlRun(["-D", "-", "-o", file(), server.url("/sign")])
        let location = try #require(minted.header("Location"))
        let extended = location.replacingOccurrences(of: "expires=", with: "expires=9")
        #expect(try await CurlRun(["-D", "-", "-o", file(), extended]).status == 403)
        #expect(try await CurlRun(["-D", "-", "-o", file(), location + "0"]).status == 403)
        #expect(try await CurlRun(["-D", "-", "-o", file(), location]).status == 200)
    }

    @Test("A redirect to another host name shows whether credentials were forwarded")
    func redirectToOtherHost() async throws {
        serve()
        server.setRoute(
            "/away", TestServer.Route(size: 10, faults: [.redirect(status: 302, to: .otherHost(path: "/file"))]))
        let run = try await CurlRun(["-L", "-u", "user:secret", "-o", file(), server.url("/away")])
        #expect(run.exitCode == 0)
        // Each connection logs its request when it is done with it: the two may land in either order.
        let log = settledLog()
        #expect(Set(log.map(\.host)) == ["127.0.0.1:\(server.port)", "localhost:\(server.port)"])
        #expect(log.first { $0.host == "127.0.0.1:\(server.port)" }?.authorization == "Basic dXNlcjpzZWNyZXQ=")
        #expect(log.first { $0.host == "localhost:\(server.port)" }?.authorization == nil)
    }

    // MARK: - Headers

    @Test("Content-Disposition and raw headers are sent byte for byte")
    func dispositionAndRawHeaders() async throws {
        let run = try await CurlRun([
            "-D", "-", "-o", file(),
            serve([
                .contentDisposition("attachment; filename=\"../x\""),
                .rawHeader(name: "X-Name", value: [0x2F, 0xE9, 0x01]),
            ]),
        ])
        #expect(run.header("Content-Disposition") == "attachment; filename=\"../x\"")
        #expect(run.output.range(of: Data("X-Name: ".utf8) + Data([0x2F, 0xE9, 0x01, 0x0D, 0x0A])) != nil)
    }

    @Test(
        "Digest headers are right or wrong on request, and only Content-MD5 is left off partial responses",
        arguments: [true, false])
    func digestHeaders(correct: Bool) async throws {
        let url = serve([
            .contentMD5(correct: correct), .digest([.md5, .sha256], correct: correct),
            .reprDigest([.sha256, .sha512], correct: correct),
        ])
        let head = try await CurlRun(["-I", url])
        let md5 = content.base64Digest(.md5)
        let sha256 = content.base64Digest(.sha256)
        let sha512 = content.base64Digest(.sha512)
        #expect((head.header("Content-MD5") == md5) == correct)
        #expect((head.header("Digest") == "MD5=\(md5),SHA-256=\(sha256)") == correct)
        #expect((head.header("Repr-Digest") == "sha-256=:\(sha256):, sha-512=:\(sha512):") == correct)
        #expect(head.header("Digest")?.hasPrefix("MD5=") == true)
        let partial = try await CurlRun(["-D", "-", "-o", file(), "-r", "0-9", url])
        #expect(partial.header("Content-MD5") == nil)
        #expect(partial.header("Repr-Digest") == head.header("Repr-Digest"))
    }

    @Test("Cloud digest headers: x-goog-hash carries the MD5, x-amz-checksum the SHA-256 or a composite")
    func cloudDigestHeaders() async throws {
        let md5 = content.base64Digest(.md5)
        let sha256 = content.base64Digest(.sha256)
        let goog = try await CurlRun(["-I", serve([.googHash(correct: true)])])
        #expect(goog.header("x-goog-hash") == "crc32c=AAAAAA==, md5=\(md5)")
        let wrongGoog = try await CurlRun(["-I", serve([.googHash(correct: false)])])
        #expect(wrongGoog.header("x-goog-hash")?.hasSuffix("md5=\(md5)") == false)
        let amz = try await CurlRun(["-I", serve([.amzChecksum(correct: true, composite: false)])])
        #expect(amz.header("x-amz-checksum-sha256") == sha256)
        #expect(amz.header("x-amz-checksum-type") == "FULL_OBJECT")
        let composite = try await CurlRun(["-I", serve([.amzChecksum(correct: true, composite: true)])])
        #expect(composite.header("x-amz-checksum-sha256") == "\(sha256)-3")
        #expect(composite.header("x-amz-checksum-type") == "COMPOSITE")
    }

    // MARK: - Lifecycle

    @Test("Shutdown wakes and closes a stalled connection")
    func shutdownClosesStalledConnection() async throws {
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // curl's own deadline is only a backstop: the shutdown ends the transfer (exit 18) however late this task runs.
        curl.arguments = ["curl", "--silent", "--max-time", "300", "-o", file(), serve([.stall(afterBytes: 1000)])]
        try curl.run()
        let deadline = ContinuousClock.now + .seconds(120)
        while server.totalBodyBytesSent < 1000 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        server.shutdown()
        curl.waitUntilExit()
        #expect(curl.terminationStatus == 18)
    }

    /// The first line the executable writes to `output`: the URL it serves, without the newline.
    static func firstLine(of output: Pipe) -> String {
        var firstLine = Data()
        while !firstLine.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            firstLine += chunk
        }
        return String(decoding: firstLine, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("The executable serves its content and exits 0 on SIGTERM", .enabled(if: TestServerTests.executable != nil))
    func executableRun() async throws {
        let process = Process()
        process.executableURL = TestServerTests.executable
        process.arguments = [
            "--port", "0", "--size", "4096", "--seed", "5", "--path", "/data", "--fault", "first=1:status=503:7",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let url = Self.firstLine(of: output)
        #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/data"))
        let refused = try await CurlRun(["-D", "-", "-o", file(), url])
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "7")
        #expect(try await CurlRun(["-o", file(), url]).exitCode == 0)
        #expect(try TestContent(seed: 5, size: 4096).firstDifference(fromFileAt: file()) == nil)
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
    }

    @Test(
        "With --log-requests the executable prints each response and its times; total-throttle is a fault it takes",
        .enabled(if: TestServerTests.executable != nil))
    func executableLogsRequests() async throws {
        let process = Process()
        process.executableURL = TestServerTests.executable
        process.arguments = [
            "--size", "4096", "--fault", "total-throttle=1000000", "--fault", "latency=0.05", "--log-requests",
        ]
        let output = Pipe()
        let errorOutput = Pipe()
        process.standardOutput = output
        process.standardError = errorOutput
        try process.run()
        let url = Self.firstLine(of: output)
        let before = Date().timeIntervalSince1970
        #expect(
            try await CurlRun(["-o", file(), url, "--next", "--silent", "-r", "0-9", "-o", file(), url]).exitCode == 0)
        let after = Date().timeIntervalSince1970
        process.terminate()
        process.waitUntilExit()
        let logged = String(decoding: errorOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let lines = logged.split(separator: "\n").map { $0.split(separator: " times ", maxSplits: 1) }
        #expect(
            lines.map { $0.first.map(String.init) } == [
                #"connection 1 "GET /file" range "-" 200 4096"#, #"connection 1 "GET /file" range "bytes=0-9" 206 10"#,
            ])
        // Each line's times: read, first byte, end, on the same clock as this process's, in order, and the first
        // byte at least the latency after the request.
        let times = lines.map { $0.count == 2 ? $0[1].split(separator: " ").compactMap { Double($0) } : [] }
        #expect(times.count == 2)
        for (received, firstByte, end) in times.compactMap({ $0.count == 3 ? ($0[0], $0[1], $0[2]) : nil }) {
            #expect(before <= received && received + 0.049 <= firstByte && firstByte <= end && end <= after)
        }
        #expect(times.allSatisfy { $0.count == 3 })
        #expect(process.terminationStatus == 0)
    }

    /// The `braid-test-server` built next to this test bundle, if it was built.
    static var executable: URL? {
        let candidate = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("braid-test-server")
        return FileManager.default.isExecutableFile(atPath: candidate.path) ? candidate : nil
    }
}
