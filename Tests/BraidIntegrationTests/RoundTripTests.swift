import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// Requests a download spends, counted at the server: every one costs a round trip and a first byte.
@Suite("round trips")
struct RoundTripTests {
    /// 24 MiB: one connection's plan cuts it into seven pieces (1, 2, 6, 6, 6, 2 and 1 MiB), each a request before.
    static let content = TestContent(seed: 2929, size: 24 << 20)

    @Test("-n 1 fetches the file in one request, however many pieces its plan has")
    func oneConnectionOneRequest() async throws {
        let server = TestServer(routes: ["/f": .init(content: Self.content)])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-round-trips")
        defer { directory.remove() }
        let output = directory.appending("f").path

        let run = try await BraidCLI.run([server.url("/f"), "-n", "1", "-q", "--no-fsync", "-o", output])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: output) == nil)
        // A probe fetches no body, or a byte: the requests that carry the file are the others.
        let data = server.requestLog.filter { $0.method == "GET" && $0.bodyBytesSent > 1 }
        #expect(data.count == 1, "\(data.map { $0.range ?? "-" })")
        #expect(data.first?.bodyBytesSent == Self.content.size)
    }

    @Test("against a server 150 ms from every first byte, each connection's first request is its share of the file")
    func farServerShares() async throws {
        let server = TestServer(routes: ["/f": .init(content: Self.content, faults: [.latency(.milliseconds(150))])])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-round-trips")
        defer { directory.remove() }
        let output = directory.appending("f").path

        let run = try await BraidCLI.run([server.url("/f"), "-n", "4", "-q", "--no-fsync", "-o", output])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: output) == nil)
        // The probe's first piece (1 MiB) tells what a request costs before the others start: they take a quarter
        // of what is left each (6 MiB), not the plan's pieces of one or two (sixteen requests in all before).
        let data = server.requestLog.filter { $0.method == "GET" && $0.bodyBytesSent > 1 }
        #expect(data.filter { $0.bodyBytesSent >= 5 << 20 }.count >= 3, "\(data.map { $0.range ?? "-" })")
        // Then the tail ends together by steals from connections that lag: how many depends on the machine's load
        // (a loaded CI run made two), so the bound allows three, half the sixteen requests of the plan's pieces.
        #expect(data.count <= 1 + 4 + 3, "\(data.map { $0.range ?? "-" })")
    }
}
