import BraidTestSupport
import Foundation
import Testing

/// HTTP/2 by ALPN where nginx offers it, `--http1.1` and `--http2` to force either, h2c with prior knowledge, and a
/// server that offers HTTP/2 but resets its streams.
@Suite("HTTP versions", .serialized)
struct HTTPVersionTests {
    static let small = ["s1.bin", "s2.bin", "s3.bin"]
    static let big = "big.bin"

    /// nginx offering HTTP/2, serving three small files and a large one, also under `/reset/`, which resets every
    /// HTTP/2 stream.
    static func start() async throws -> ConnectionPoolTests.Fixture {
        try await ConnectionPoolTests.Fixture.start(
            files: small.map { ($0, 48 << 10) } + [(big, 20 << 20)], offersHTTP2: true,
            locations: [resetting])
    }

    static var resetting: NginxFixture.Location {
        var location = NginxFixture.Location.prefix("/reset/")
        location.resetsHTTP2Streams = true
        return location
    }

    enum Variant: String, CaseIterable, CustomTestStringConvertible {
        case automatic, http1, http2, h2c
        var testDescription: String { rawValue }
        var arguments: [String] {
            switch self {
            case .automatic: []
            case .http1: ["--http1.1"]
            case .http2, .h2c: ["--http2"]
            }
        }
    }

    @Test("every version gives the same files, over the protocol asked for", arguments: Variant.allCases)
    func sameFiles(_ variant: Variant) async throws {
        let fixture = try await Self.start()
        defer { fixture.shutdown() }
        let names = Self.small + [Self.big]
        let urls = names.map { fixture.nginx.url("/\($0)", tls: variant != .h2c, h2c: variant == .h2c) }

        let run = try await BraidCLI.run(
            [
                "-i", try fixture.list(urls: urls), "-d", fixture.output("").path, "-n", "4", "--cacert",
                fixture.certificate,
            ]
                + variant.arguments + ["-q", "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        for name in names { #expect(try fixture.sameBytes(name), "\(name)") }
        let log = try await fixture.nginx.waitForAccessLog("every file") { entries in
            Set(entries.filter { $0.status / 100 == 2 }.map(\.path)).count == names.count
        }
        let smallVersions = Set(log.filter { $0.path != "/\(Self.big)" }.map(\.httpVersion))
        let bigVersions = Set(log.filter { $0.path == "/\(Self.big)" && $0.range != nil }.map(\.httpVersion))
        switch variant {
        case .automatic:
            // The small files, and the large one's first request, are streams of the lane's shared connection; the
            // large file's segments are HTTP/1.1, one connection each, on the lane's pool for them
            // (`DownloadJob.spreadsSegments`), so that a cap on each connection adds up.
            let segments = log.filter { $0.path == "/\(Self.big)" && $0.httpVersion == "HTTP/1.1" }
            #expect(smallVersions == ["HTTP/2.0"], "\(log.map { ($0.path, $0.request) })")
            #expect(bigVersions == ["HTTP/2.0", "HTTP/1.1"], "\(log.map { ($0.path, $0.request) })")
            #expect(Set(segments.map(\.connection)).count > 1, "\(segments.map { ($0.range, $0.connection) })")
        case .http1:
            #expect(smallVersions.union(bigVersions) == ["HTTP/1.1"])
        case .http2, .h2c:
            #expect(smallVersions.union(bigVersions) == ["HTTP/2.0"])
        }
    }

    @Test("a list's large file spreads its segments over connections of their own, within the per-host cap")
    func spreadSegmentsWithinCap() async throws {
        let fixture = try await Self.start()
        defer { fixture.shutdown() }
        let names = Self.small + [Self.big]

        let run = try await BraidCLI.run([
            "-i", try fixture.list(urls: names.map { fixture.nginx.url("/\($0)", tls: true) }), "-d",
            fixture.output("").path, "-n", "8", "--max-connections-per-host", "4", "--cacert", fixture.certificate,
            "-q", "--no-fsync",
        ])

        #expect(run.status == .exited(0), "\(run.standardError)")
        for name in names { #expect(try fixture.sameBytes(name), "\(name)") }
        let log = try await fixture.nginx.waitForAccessLog("every file") { entries in
            Set(entries.filter { $0.status / 100 == 2 }.map(\.path)).count == names.count
        }
        let segments = log.filter { $0.path == "/\(Self.big)" && $0.httpVersion == "HTTP/1.1" }
        // One lane under a cap of 4: its shared HTTP/2 connection and at most three of the segments' own.
        #expect(Set(segments.map(\.connection)).count > 1, "\(segments.map { ($0.range, $0.connection) })")
        #expect(Set(log.map(\.connection)).count <= 4, "\(log.map { ($0.path, $0.httpVersion, $0.connection) })")
    }

    @Test("a list's file under 16 MiB keeps its segments on the shared connection, its first request adopted")
    func mediumFileMultiplexed() async throws {
        let fixture = try await ConnectionPoolTests.Fixture.start(
            files: [("medium.bin", 6 << 20)], offersHTTP2: true)
        defer { fixture.shutdown() }

        let run = try await BraidCLI.run([
            "-i", try fixture.list(urls: [fixture.nginx.url("/medium.bin", tls: true)]), "-d",
            fixture.output("").path, "-n", "4", "--cacert", fixture.certificate, "-q", "--no-fsync",
        ])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try fixture.sameBytes("medium.bin"))
        let log = try await fixture.nginx.waitForAccessLog("the whole file") {
            $0.filter { $0.status == 206 }.reduce(0) { $0 + $1.bodyBytesSent } >= 6 << 20
        }
        // Spread, it would give up its first request's MiB, a sixth of the file: asked for once, it is not.
        #expect(Set(log.map(\.httpVersion)) == ["HTTP/2.0"], "\(log.map { ($0.request, $0.range) })")
        #expect(log.filter { $0.status == 206 }.reduce(0) { $0 + $1.bodyBytesSent } == 6 << 20)
    }

    @Test("a large file on its own, on a pool of its own, asks HTTP/1.1 for its segments")
    func segmentsOnTheirOwn() async throws {
        let fixture = try await Self.start()
        defer { fixture.shutdown() }

        let run = try await BraidCLI.run([
            fixture.nginx.url("/\(Self.big)", tls: true), "-o", fixture.output(Self.big).path, "-n", "4",
            "--cacert", fixture.certificate, "-q", "--no-fsync",
        ])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try fixture.sameBytes(Self.big))
        let log = try await fixture.nginx.waitForAccessLog("the whole file") {
            $0.filter { $0.status == 206 }.reduce(0) { $0 + $1.bodyBytesSent } >= 20 << 20
        }
        #expect(Set(log.map(\.httpVersion)) == ["HTTP/1.1"], "\(log.map { ($0.request, $0.connection) })")
    }

    @Test("a server that offers HTTP/2 and resets its streams is asked again over HTTP/1.1", arguments: [false, true])
    func resetStreamsFallBack(forced: Bool) async throws {
        let fixture = try await Self.start()
        defer { fixture.shutdown() }
        let names = Self.small + [Self.big]
        let urls = names.map { fixture.nginx.url("/reset/\($0)", tls: true) }

        let run = try await BraidCLI.run(
            [
                "-i", try fixture.list(urls: urls), "-d", fixture.output("").path, "-n", "4", "--cacert",
                fixture.certificate,
            ]
                + (forced ? ["--http2"] : []) + ["-q", "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        for name in names { #expect(try fixture.sameBytes(name), "\(name)") }
        let log = try await fixture.nginx.waitForAccessLog("every file") { entries in
            Set(entries.filter { $0.status / 100 == 2 }.map(\.path)).count == names.count
        }
        #expect(log.contains { $0.httpVersion == "HTTP/2.0" && $0.status == 444 }, "HTTP/2 was offered and reset")
        #expect(log.filter { $0.status / 100 == 2 }.allSatisfy { $0.httpVersion == "HTTP/1.1" })
    }
}
