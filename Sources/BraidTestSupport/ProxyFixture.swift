import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real proxy on a free 127.0.0.1 port: tinyproxy for HTTP, microsocks for SOCKS5, each started with a
/// configuration of its own (never the system's service), so a test can see in the proxy's own log that requests
/// went through it.
///
/// ```swift
/// let proxy = try await ProxyFixture.start(.http)
/// defer { proxy.shutdown() }
/// ```
public final class ProxyFixture: @unchecked Sendable {
    // Safe to share: every stored property is immutable.

    /// Which proxy to run.
    public enum Kind: Sendable {
        /// tinyproxy, an HTTP proxy (absolute-URI requests and `CONNECT`).
        case http
        /// microsocks, a SOCKS5 proxy; with `credentials`, it refuses clients that do not present them.
        case socks5(credentials: (user: String, password: String)?)

        var executable: String {
            switch self {
            case .http: "tinyproxy"
            case .socks5: "microsocks"
            }
        }
    }

    public let kind: Kind
    /// The port on 127.0.0.1.
    public var port: Int { server.port }

    private let server: LoopbackServerProcess

    private init(kind: Kind, server: LoopbackServerProcess) {
        self.kind = kind
        self.server = server
    }

    /// Starts the proxy and returns once it accepts connections; a port taken meanwhile is retried on a new one.
    ///
    /// Throws `TestSupportError.proxyFailedToStart` naming the Debian package when the proxy is not installed.
    public static func start(_ kind: Kind) async throws -> ProxyFixture {
        let (server, _) = try await LoopbackServerProcess.start(
            kind.executable, prefix: "braid-proxy", missing: "apt-get install tinyproxy microsocks",
            prepare: { _ in }
        ) { port, directory, _ in
            switch kind {
            case .http:
                let configuration = """
                    Port \(port)
                    Listen 127.0.0.1
                    LogFile "\(directory.appending("proxy.log").path)"
                    LogLevel Info
                    Allow 127.0.0.1
                    MaxClients 100
                    Timeout 60

                    """
                try configuration.write(to: directory.appending("tinyproxy.conf"), atomically: true, encoding: .utf8)
                return ["-d", "-c", directory.appending("tinyproxy.conf").path]
            case let .socks5(credentials):
                return ["-i", "127.0.0.1", "-p", "\(port)"]
                    + (credentials.map { ["-u", $0.user, "-P", $0.password] } ?? [])
            }
        }
        return ProxyFixture(kind: kind, server: server)
    }

    /// The proxy's URL for `--proxy`, with the credentials if `credentials` is given (`socks5h://u:p@…`).
    public func url(scheme: String? = nil, credentials: (user: String, password: String)? = nil) -> String {
        let scheme =
            scheme
            ?? {
                switch kind {
                case .http: "http"
                case .socks5: "socks5h"
                }
            }()
        let userinfo = credentials.map { "\($0.user):\($0.password)@" } ?? ""
        return "\(scheme)://\(userinfo)127.0.0.1:\(port)"
    }

    /// Everything the proxy has logged: tinyproxy's log file, or microsocks' output.
    public var log: String {
        let file = (try? String(contentsOf: server.directory.appending("proxy.log"), encoding: .utf8)) ?? ""
        return file + server.process.standardOutput + server.process.standardError
    }

    /// What the proxy forwarded, one entry per request or connection: tinyproxy's request lines
    /// (`GET http://127.0.0.1:8080/file.bin HTTP/1.1`, `CONNECT 127.0.0.1:8443 HTTP/1.1`), microsocks' connected
    /// destinations (`127.0.0.1:8080`).
    public func forwarded() -> [String] {
        log.split(separator: "\n").compactMap { line -> String? in
            switch kind {
            case .http:
                guard line.contains("]: Request (") else { return nil }
                return line.split(separator: ": ", maxSplits: 2).last.map(String.init)
            case .socks5:
                guard let range = line.range(of: "connected to ") else { return nil }
                return String(line[range.upperBound...])
            }
        }
    }

    /// Kills the proxy at once (SIGKILL), as a proxy that dies mid-transfer; `shutdown()` is still needed.
    public func kill() {
        server.process.stop(signal: SIGKILL)
    }

    /// Stops the proxy and deletes its directory; safe to call more than once.
    public func shutdown() {
        server.shutdown()
    }
}
