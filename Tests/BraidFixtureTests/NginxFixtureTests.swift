import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("NginxFixture")
struct NginxFixtureTests {
    /// Deliberately not a multiple of the content's block size or of a page.
    static let fileSize = 3 * PseudoRandomContent.blockSize + 12_345
    static let content = PseudoRandomContent(seed: 7)

    @Test("nginx starts on a free port and serves a file byte for byte")
    func servesFile() async throws {
        let nginx = try await NginxFixture.start()
        defer { nginx.shutdown() }
        let source = nginx.documentRoot.appendingPathComponent("file.bin")
        try Self.content.write(to: source, size: Self.fileSize)
        let output = try TemporaryDirectory()
        defer { output.remove() }
        let downloaded = output.appending("file.bin")

        let result = try await ChildProcess.run("curl", ["-sS", "-f", "-o", downloaded.path, nginx.url("/file.bin")])

        #expect(result.status.isSuccess, "\(result.standardError)")
        #expect(nginx.port > 0)
        #expect(try Data(contentsOf: downloaded) == Data(contentsOf: source))
        #expect(try await MD5Digest.of(fileAt: downloaded) == MD5Digest.of(fileAt: source))
        let log = try await nginx.waitForAccessLog(count: 1)
        #expect(log.map(\.status) == [200])
        #expect(log.first?.bodyBytesSent == Self.fileSize)
        #expect(log.first?.path == "/file.bin")
        #expect(log.first?.isComplete == true)
    }

    @Test("a range request gets 206, the right Content-Range and exactly those bytes")
    func rangeRequest() async throws {
        let nginx = try await NginxFixture.start()
        defer { nginx.shutdown() }
        try Self.content.write(to: nginx.documentRoot.appendingPathComponent("file.bin"), size: Self.fileSize)
        let output = try TemporaryDirectory()
        defer { output.remove() }
        let range = (PseudoRandomContent.blockSize - 1000)..<(PseudoRandomContent.blockSize + 5000)

        let result = try await ChildProcess.run(
            "curl",
            [
                "-sS", "-r", "\(range.lowerBound)-\(range.upperBound - 1)",
                "-D", output.appending("headers").path, "-o", output.appending("part").path,
                nginx.url("/file.bin"),
            ]
        )

        #expect(result.status.isSuccess, "\(result.standardError)")
        let headers = try String(contentsOf: output.appending("headers"), encoding: .utf8)
        #expect(headers.hasPrefix("HTTP/1.1 206"))
        #expect(headers.contains("Content-Range: bytes \(range.lowerBound)-\(range.upperBound - 1)/\(Self.fileSize)"))
        #expect(try Data(contentsOf: output.appending("part")) == Self.content.bytes(in: range))
        let log = try await nginx.waitForAccessLog(count: 1)
        #expect(log.first?.status == 206)
        #expect(log.first?.range == "bytes=\(range.lowerBound)-\(range.upperBound - 1)")
        #expect(log.first?.bodyBytesSent == range.count)
    }

    @Test("the access log shows requests that shared one kept-alive connection")
    func keepAliveInAccessLog() async throws {
        let nginx = try await NginxFixture.start()
        defer { nginx.shutdown() }
        try Self.content.write(to: nginx.documentRoot.appendingPathComponent("a.bin"), size: 1000)
        try Self.content.write(to: nginx.documentRoot.appendingPathComponent("b.bin"), size: 2000)

        let result = try await ChildProcess.run(
            "curl", ["-sS", "-o", "/dev/null", "-o", "/dev/null", nginx.url("/a.bin"), nginx.url("/b.bin")]
        )

        #expect(result.status.isSuccess, "\(result.standardError)")
        let log = try await nginx.waitForAccessLog(count: 2)
        #expect(log.map(\.path) == ["/a.bin", "/b.bin"])
        #expect(log.map(\.bodyBytesSent) == [1000, 2000])
        #expect(log[0].connection == log[1].connection)
        #expect(log.allSatisfy { $0.scheme == "http" && $0.range == nil })
    }

    @Test("a limit_rate location is much slower than the same file unthrottled")
    func throttledLocation() async throws {
        let bytesPerSecond = 256 << 10
        let nginx = try await NginxFixture.start(
            .init(locations: [.prefix("/throttled/", bytesPerSecond: bytesPerSecond)]))
        defer { nginx.shutdown() }
        // nginx lets the first second's worth through at once, so the file is three seconds' worth.
        try Self.content.write(to: nginx.documentRoot.appendingPathComponent("file.bin"), size: 3 * bytesPerSecond)

        let throttled = try await Self.downloadSpeed(nginx.url("/throttled/file.bin"))
        let unthrottled = try await Self.downloadSpeed(nginx.url("/file.bin"))

        #expect(throttled < Double(4 * bytesPerSecond))
        #expect(unthrottled > 10 * throttled)
    }

    @Test("an exact location adds its headers to that file only")
    func extraHeaders() async throws {
        let documentRoot = try TemporaryDirectory()
        defer { documentRoot.remove() }
        let source = documentRoot.appending("file.bin")
        try Self.content.write(to: source, size: 4096)
        try Self.content.write(to: documentRoot.appending("other.bin"), size: 4096)
        let digest = try await MD5Digest.of(fileAt: source)
        let nginx = try await NginxFixture.start(
            .init(
                documentRoot: documentRoot.url,
                locations: [
                    .exact("/file.bin", headers: [("Content-MD5", digest.base64)]),
                    .exact(
                        "/wrong-md5/file.bin", serving: "/file.bin",
                        headers: [("Content-MD5", "AAAAAAAAAAAAAAAAAAAAAA==")]),
                ]
            )
        )
        defer { nginx.shutdown() }

        #expect(try await Self.headers(nginx.url("/file.bin")).contains("Content-MD5: \(digest.base64)\r\n"))
        #expect(
            try await Self.headers(nginx.url("/wrong-md5/file.bin")).contains(
                "Content-MD5: AAAAAAAAAAAAAAAAAAAAAA==\r\n"))
        #expect(try await !Self.headers(nginx.url("/other.bin")).contains("Content-MD5"))
        #expect(FileManager.default.fileExists(atPath: source.path))
    }

    @Test("HTTPS works with the fixture's certificate as CA file and fails without it")
    func tls() async throws {
        let nginx = try await NginxFixture.start(.init(enablesTLS: true))
        defer { nginx.shutdown() }
        let source = nginx.documentRoot.appendingPathComponent("file.bin")
        try Self.content.write(to: source, size: Self.fileSize)
        let output = try TemporaryDirectory()
        defer { output.remove() }
        let certificate = try #require(nginx.certificatePath)
        let tlsPort = try #require(nginx.tlsPort)

        let trusted = try await ChildProcess.run(
            "curl",
            ["-sS", "--cacert", certificate, "-o", output.appending("ip").path, nginx.url("/file.bin", tls: true)]
        )
        let byName = try await ChildProcess.run(
            "curl",
            [
                "-sS", "--cacert", certificate, "-o", output.appending("name").path,
                "https://localhost:\(tlsPort)/file.bin",
            ]
        )
        let untrusted = try await ChildProcess.run(
            "curl", ["-sS", "-o", "/dev/null", nginx.url("/file.bin", tls: true)])

        #expect(trusted.status.isSuccess, "\(trusted.standardError)")
        #expect(byName.status.isSuccess, "\(byName.standardError)")
        #expect(try Data(contentsOf: output.appending("ip")) == Data(contentsOf: source))
        #expect(try Data(contentsOf: output.appending("name")) == Data(contentsOf: source))
        #expect(!untrusted.status.isSuccess)
        #expect(untrusted.standardError.contains("certificate"))
        let log = try await nginx.waitForAccessLog(count: 2)
        #expect(log.map(\.scheme) == ["https", "https"])
    }

    @Test("shutdown stops the master and its workers and removes the fixture's files")
    func shutdownLeavesNothing() async throws {
        let nginx = try await NginxFixture.start(.init(workerProcesses: 2))
        let master = nginx.processIdentifier
        var workers: [Int32] = []
        try await Polling.until("nginx to start two workers", timeout: .seconds(10)) {
            workers = Self.children(of: master)
            return workers.count == 2
        }
        let documentRoot = nginx.documentRoot

        nginx.shutdown()

        for pid in [master] + workers {
            #expect(kill(pid, 0) == -1 && errno == ESRCH, "process \(pid) survived shutdown")
        }
        #expect(!FileManager.default.fileExists(atPath: documentRoot.path))
        let probe = try await ChildProcess.run("curl", ["-sS", "-o", "/dev/null", nginx.url("/")])
        #expect(probe.status == .exited(7), "connection should be refused: \(probe.standardError)")
    }

    @Test("a picked port has nothing listening on it")
    func freePort() async throws {
        let port = try FreePort.pick()
        let probe = try await ChildProcess.run("curl", ["-sS", "-o", "/dev/null", "http://127.0.0.1:\(port)/"])
        #expect(probe.status == .exited(7), "connection should be refused: \(probe.standardError)")
    }

    /// The average download speed curl reports for `url`, in bytes per second.
    private static func downloadSpeed(_ url: String) async throws -> Double {
        let result = try await ChildProcess.run(
            "curl", ["-sS", "-f", "-o", "/dev/null", "-w", "%{speed_download}", url])
        try #require(result.status.isSuccess, "\(result.standardError)")
        return try #require(Double(result.standardOutput))
    }

    /// The response headers of a GET for `url`.
    private static func headers(_ url: String) async throws -> String {
        let result = try await ChildProcess.run("curl", ["-sS", "-f", "-D", "-", "-o", "/dev/null", url])
        try #require(result.status.isSuccess, "\(result.standardError)")
        return result.standardOutput
    }

    private static func children(of pid: Int32) -> [Int32] {
        let list = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return list.split(separator: " ").compactMap { Int32($0) }
    }
}
