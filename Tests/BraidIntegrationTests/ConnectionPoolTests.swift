import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// One connection pool for a download's requests and for every download of a list (issues 28 and 29): connections
/// and TLS sessions are reused, the caps hold, and no download's credentials ride on another's request.
@Suite("Connection pool", .serialized)
struct ConnectionPoolTests {
    /// nginx over HTTPS serving `files` (name and size) from a fresh document root.
    struct Fixture {
        let nginx: NginxFixture
        let directory: TemporaryDirectory

        static func start(
            files: [(String, Int)], offersHTTP2: Bool = false, locations: [NginxFixture.Location] = []
        ) async throws -> Fixture {
            let directory = try TemporaryDirectory(prefix: "braid-pool")
            let root = directory.appending("www")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: directory.appending("out"), withIntermediateDirectories: true)
            for (index, (name, size)) in files.enumerated() {
                try PseudoRandomContent(seed: UInt64(index + 1)).write(
                    to: root.appendingPathComponent(name), size: size)
            }
            let nginx = try await NginxFixture.start(
                .init(documentRoot: root, locations: locations, enablesTLS: true, offersHTTP2: offersHTTP2))
            return Fixture(nginx: nginx, directory: directory)
        }

        var certificate: String { nginx.certificatePath! }
        func output(_ name: String) -> URL { directory.appending("out").appendingPathComponent(name) }
        func served(_ name: String) -> URL { directory.appending("www").appendingPathComponent(name) }

        /// Writes a list of the files' HTTPS URLs and returns its path.
        func list(_ names: [String]) throws -> String {
            try list(urls: names.map { nginx.url("/\($0)", tls: true) })
        }

        /// Writes a list of `urls` and returns its path.
        func list(urls: [String]) throws -> String {
            let url = directory.appending("list.txt")
            try Data(urls.map { $0 + "\n" }.joined().utf8).write(to: url)
            return url.path
        }

        func sameBytes(_ name: String) throws -> Bool {
            try Data(contentsOf: output(name)) == Data(contentsOf: served(name))
        }

        func shutdown() {
            nginx.shutdown()
            directory.remove()
        }
    }

    @Test("a download's probe and its range requests share connections: no more than its count and its cuts")
    func probeConnectionReused() async throws {
        let fixture = try await Fixture.start(files: [("big.bin", 8 << 20)])
        defer { fixture.shutdown() }

        let run = try await BraidCLI.run([
            fixture.nginx.url("/big.bin", tls: true), "-o", fixture.output("big.bin").path, "-n", "4",
            "--cacert", fixture.certificate, "-q", "--no-fsync",
        ])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try fixture.sameBytes("big.bin"))
        let log = try await fixture.nginx.waitForAccessLog("the whole file") {
            $0.filter { $0.method == "GET" }.reduce(0) { $0 + $1.bodyBytesSent } >= 8 << 20
        }
        // The probe's connection carries the first request and is closed where that request's bytes end (its response,
        // bytes=0-, goes on), as is a connection whose response a steal cut short (a loaded machine's lagging one):
        // each such slot opens one more. Every other request reuses a connection. A response the socket buffers held
        // whole before its cut counts as complete at the server, though its connection closed: a cut is also seen as
        // a later request that starts inside another's range (the probe's, or a steal's victim's).
        let connections = Set(log.map(\.connection))
        let ranges = log.map { Self.bytes(of: $0.range) }
        let cut = log.indices.filter { index in
            !log[index].isComplete
                || ranges.contains { other in
                    guard let range = ranges[index], let start = other?.lowerBound else { return false }
                    return range.lowerBound < start && range.contains(start)
                }
        }
        #expect(
            connections.count <= 4 + max(1, cut.count),
            "\(log.map { ($0.method, $0.connection, $0.range ?? "-", $0.isComplete) })")
        #expect(log.filter { $0.range?.hasPrefix("bytes=0-") == true }.count == 1, "the probe's response is adopted")
    }

    /// The bytes a `Range` header of the form `bytes=FIRST-` or `bytes=FIRST-LAST` asks for; nil for any other.
    static func bytes(of range: String?) -> ClosedRange<Int64>? {
        guard let spec = range?.split(separator: "=").last, range?.hasPrefix("bytes=") == true else { return nil }
        let bounds = spec.split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0]) else { return nil }
        let last = bounds[1].isEmpty ? Int64.max : Int64(bounds[1])
        return last.flatMap { $0 >= first ? first...$0 : nil }
    }

    @Test("a list's second download from the same host opens no new connection nor TLS handshake")
    func secondDownloadReusesConnection() async throws {
        let fixture = try await Fixture.start(files: [("a.bin", 64 << 10), ("b.bin", 64 << 10)])
        defer { fixture.shutdown() }

        let run = try await BraidCLI.run([
            "-i", try fixture.list(["a.bin", "b.bin"]), "-d", fixture.output("").path, "-j", "1",
            "--cacert", fixture.certificate, "-q", "--no-fsync",
        ])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try fixture.sameBytes("a.bin") && fixture.sameBytes("b.bin"))
        let log = try await fixture.nginx.waitForAccessLog("both files") { entries in
            Set(entries.filter { $0.method == "GET" }.map(\.path)) == ["/a.bin", "/b.bin"]
        }
        // One connection, so one handshake, for every request of both downloads.
        #expect(Set(log.map(\.connection)).count == 1, "\(log.map { ($0.path, $0.method, $0.connection) })")
    }

    @Test("100 files over HTTPS open at most the per-host cap of connections")
    func hundredFilesWithinCap() async throws {
        let names = (0..<100).map { "f\($0).bin" }
        let fixture = try await Fixture.start(files: names.map { ($0, 16 << 10) })
        defer { fixture.shutdown() }

        let run = try await BraidCLI.run([
            "-i", try fixture.list(names), "-d", fixture.output("").path, "-j", "8",
            "--max-connections-per-host", "4", "--cacert", fixture.certificate, "-q", "--no-fsync",
        ])

        #expect(run.status == .exited(0), "\(run.standardError)")
        for name in names { #expect(try fixture.sameBytes(name), "\(name)") }
        let log = try await fixture.nginx.waitForAccessLog("every file") { entries in
            Set(entries.filter { $0.method == "GET" }.map(\.path)).count == names.count
        }
        let connections = Set(log.map(\.connection))
        #expect(connections.count <= 4, "\(connections.count) connections for \(log.count) requests")
        // A connection made after the first resumes its TLS session: at most one full handshake per connection.
        let fullHandshakes = Set(log.filter { $0.tlsSessionReused == false }.map(\.connection))
        #expect(fullHandshakes.count <= connections.count)
    }

    @Test("100 files at once over HTTP/2 are streams on one connection per lane")
    func hundredFilesOverHTTP2() async throws {
        let names = (0..<100).map { "f\($0).bin" }
        let fixture = try await Fixture.start(files: names.map { ($0, 16 << 10) }, offersHTTP2: true)
        defer { fixture.shutdown() }

        let run = try await BraidCLI.run([
            "-i", try fixture.list(names), "-d", fixture.output("").path, "-j", "16",
            "--cacert", fixture.certificate, "-q", "--no-fsync",
        ])

        #expect(run.status == .exited(0), "\(run.standardError)")
        for name in names { #expect(try fixture.sameBytes(name), "\(name)") }
        let log = try await fixture.nginx.waitForAccessLog("every file") { entries in
            Set(entries.filter { $0.method == "GET" }.map(\.path)).count == names.count
        }
        #expect(log.allSatisfy { $0.httpVersion == "HTTP/2.0" }, "\(log.map(\.httpVersion))")
        // Two lanes, each a pool of its own, where two cores can receive (the default caps are 16 and 48).
        let lanes = ProcessInfo.processInfo.activeProcessorCount >= 2 ? 2 : 1
        #expect(Set(log.map(\.connection)).count <= lanes, "\(Set(log.map(\.connection)))")
    }

    @Test("a manager's second download reuses the first's connection and carries none of its credentials")
    func noCredentialsAcrossDownloads() async throws {
        let content = TestContent(seed: 7, size: 2 << 20)
        let server = TestServer(routes: ["/a.bin": .init(content: content), "/b.bin": .init(content: content)])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-pool-credentials")
        defer { directory.remove() }
        let jar = directory.appending("cookies.txt")
        try Data("127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tjar-secret\n".utf8).write(to: jar)

        var withCredentials = DownloadOptions()
        withCredentials.destination = .file(directory.appending("a.bin").path)
        withCredentials.connections = 2
        withCredentials.syncOnCompletion = false
        withCredentials.headers = ["Authorization: Bearer header-secret"]
        withCredentials.cookieFilePath = jar.path
        var without = withCredentials
        without.destination = .file(directory.appending("b.bin").path)
        without.headers = []
        without.cookieFilePath = nil
        let manager = DownloadManager(limits: .init(concurrentDownloads: 1))
        let outcomes = await manager.run([
            manager.makeDownload(url: server.url("/a.bin"), options: withCredentials),
            manager.makeDownload(url: server.url("/b.bin"), options: without),
        ])

        for outcome in outcomes { #expect((try? outcome.get()) != nil, "\(outcome)") }
        #expect(try content.firstDifference(fromFileAt: directory.appending("b.bin").path) == nil)
        #expect(server.waitUntilIdle())
        let first = server.requestLog.filter { $0.target == "/a.bin" }
        let second = server.requestLog.filter { $0.target == "/b.bin" }
        #expect(
            first.allSatisfy { $0.authorization == "Bearer header-secret" && $0.cookie == "session=jar-secret" },
            "\(first.map { ($0.authorization, $0.cookie) })")
        #expect(
            second.allSatisfy { $0.authorization == nil && $0.cookie == nil },
            "\(second.map { ($0.authorization, $0.cookie) })")
        #expect(
            !Set(second.map(\.connection)).isDisjoint(with: first.map(\.connection)),
            "connections \(first.map(\.connection)) then \(second.map(\.connection))")
    }
}
