import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// Mirrors of one file: segments spread across them, and a failing mirror is dropped, never the download.
@Suite("mirrors")
struct MirrorTests {
    static let content = TestContent(seed: 31, size: 12 << 20)

    /// Two servers on separate ports, so that each counts as its own mirror.
    struct Pair {
        let primary: TestServer
        let mirror: TestServer
        let directory: TemporaryDirectory

        init(mirrorRoute: TestServer.Route) throws {
            primary = TestServer(routes: [
                "/f": .init(content: MirrorTests.content, faults: [.throttle(bytesPerSecond: 8 << 20)])
            ])
            mirror = TestServer(routes: ["/f": mirrorRoute])
            try primary.start()
            try mirror.start()
            directory = try TemporaryDirectory(prefix: "braid-mirror")
        }

        func run() async -> LibraryDownload {
            await LibraryDownload.run(primary.url("/f"), into: directory) {
                $0.mirrors = [mirror.url("/f")]
                $0.connections = 4
            }
        }

        func gets(_ server: TestServer) -> Int {
            server.requestLog.filter { $0.method == "GET" && $0.status == 206 }.count
        }

        func shutdown() {
            primary.shutdown()
            mirror.shutdown()
            directory.remove()
        }
    }

    @Test("segments are spread over the URL and its mirror")
    func spreadsSegments() async throws {
        let pair = try Pair(mirrorRoute: .init(content: Self.content, faults: [.throttle(bytesPerSecond: 8 << 20)]))
        defer { pair.shutdown() }

        let download = await pair.run()

        #expect(try Self.content.firstDifference(fromFileAt: try download.result.get().path) == nil)
        #expect(pair.gets(pair.primary) >= 2)
        #expect(pair.gets(pair.mirror) >= 2)
    }

    @Test("a mirror that answers 404 is dropped and the download completes from the other")
    func missingOnMirror() async throws {
        let pair = try Pair(mirrorRoute: .init(content: Self.content, faults: [.status(404, retryAfter: nil)]))
        defer { pair.shutdown() }

        let download = await pair.run()

        #expect(try Self.content.firstDifference(fromFileAt: try download.result.get().path) == nil)
        #expect(download.notices.contains { $0.contains("dropping mirror") })
    }

    @Test("a mirror that keeps dropping connections is dropped after a few failures")
    func flakyMirror() async throws {
        let pair = try Pair(mirrorRoute: .init(content: Self.content, faults: [.closeAfter(bytes: 20_000)]))
        defer { pair.shutdown() }

        let download = await pair.run()

        #expect(try Self.content.firstDifference(fromFileAt: try download.result.get().path) == nil)
        #expect(download.notices.contains { $0.contains("dropping") })
    }

    @Test("a mirror serving a file of another length is not used")
    func differentLength() async throws {
        let other = TestContent(seed: 31, size: (12 << 20) + 1)
        let pair = try Pair(mirrorRoute: .init(content: other))
        defer { pair.shutdown() }

        let download = await pair.run()

        #expect(try Self.content.firstDifference(fromFileAt: try download.result.get().path) == nil)
        #expect(pair.gets(pair.mirror) == 0)
        #expect(download.notices.contains { $0.contains("another length") })
    }
}
