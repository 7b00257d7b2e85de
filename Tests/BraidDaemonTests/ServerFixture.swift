import BraidDaemon
import BraidTestSupport
import NIOConcurrencyHelpers
import Testing

/// A `DaemonServer` on a free loopback port with an `EchoEndpoint`, stopped on every path out of the test.
struct ServerFixture {
    let server: DaemonServer
    let endpoint: EchoEndpoint
    let host: String
    let port: Int

    /// `http://HOST:PORT` plus `path`.
    func url(_ path: String) -> String {
        host.contains(":") ? "http://[\(host)]:\(port)\(path)" : "http://\(host):\(port)\(path)"
    }

    /// Starts a server, runs `body` with it, and stops it whether `body` returns or throws.
    static func with<Result>(
        host: String = "127.0.0.1",
        maximumBodyBytes: Int = 2 * 1024 * 1024,
        page: [UInt8] = Array("<!doctype html><p>test page</p>".utf8),
        admitsOtherOrigins: Bool = false,
        endpoint: EchoEndpoint = EchoEndpoint(),
        configure: (inout DaemonServer.Configuration) -> Void = { _ in },
        _ body: (ServerFixture) async throws -> Result
    ) async throws -> Result {
        var configuration = DaemonServer.Configuration(
            host: host,
            port: 0,
            maximumBodyBytes: maximumBodyBytes,
            page: page,
            admitsOtherOrigins: admitsOtherOrigins
        )
        // A loaded machine may leave a test's keep-alive connection without its next request for longer than the
        // default 10 s; a test of the timeout sets its own.
        configuration.requestTimeout = Polling.patience
        configure(&configuration)
        let server = DaemonServer(configuration: configuration, endpoint: endpoint)
        let (boundHost, port) = try await server.start()
        let fixture = ServerFixture(server: server, endpoint: endpoint, host: boundHost, port: port)
        do {
            let result = try await body(fixture)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }
}
