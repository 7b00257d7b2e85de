import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real Varnish cache on a free 127.0.0.1 port in front of one backend, to show that what works through nginx's
/// cache is nothing nginx-specific. Varnish's built-in VCL caches whole objects and answers `Range` from them.
///
/// Start it with `start(backendPort:)` and call `shutdown()` when done, typically in a `defer`.
public final class VarnishFixture: Sendable {
    private let server: LoopbackServerProcess

    /// The HTTP port on 127.0.0.1.
    public var port: Int { server.port }

    private init(server: LoopbackServerProcess) {
        self.server = server
    }

    /// The `varnishd` binary, when Varnish is installed.
    public static var executablePath: String? {
        ["/usr/sbin/varnishd", "/usr/local/sbin/varnishd"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts `varnishd` caching the server on 127.0.0.1:`backendPort` and returns once it answers; a port taken
    /// before Varnish binds it is retried with another.
    public static func start(backendPort: Int) async throws -> VarnishFixture {
        guard let executable = executablePath else { throw TestSupportError.executableNotFound("varnishd") }
        let (server, _) = try await LoopbackServerProcess.start(
            executable, prefix: "braid-varnish", missing: "apt-get install varnish",
            // Varnish's cache process runs as its own user, which must reach its working directory.
            prepare: { directory in chmod(directory.url.path, 0o755) },
            ready: isReady(port:), readyWithin: .seconds(30), gracePeriod: .seconds(10)
        ) { port, directory, _ in
            [
                "-F", "-a", "127.0.0.1:\(port)", "-b", "127.0.0.1:\(backendPort)", "-n",
                directory.appending("work").path,
                "-s", "malloc,512m", "-p", "default_ttl=3600",
            ]
        }
        return VarnishFixture(server: server)
    }

    /// Stops Varnish (its manager takes its cache process along) and deletes its directory; safe to call twice.
    public func shutdown() {
        server.shutdown()
    }

    /// Whether Varnish answers at all: any status line will do (the backend may not have the path).
    @Sendable private static func isReady(port: Int) -> Bool {
        guard let socket = try? LoopbackSocket() else { return false }
        defer { socket.close() }
        let request = "HEAD / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"
        guard let response = socket.exchange(port: port, request: request, timeoutSeconds: 2) else { return false }
        return String(decoding: response, as: UTF8.self).hasPrefix("HTTP/")
    }
}
