import Foundation

/// nghttpx (Debian `nghttp2-proxy`) on a free 127.0.0.1 port in front of a plain-HTTP backend: TLS with a
/// certificate of its own, HTTP/2 offered by ALPN, and each client connection capped at a rate, as a CDN's
/// per-connection limit or a per-flow shaper caps it. Its access log names each request's client port, so a test
/// counts the connections a client opened.
///
/// ```swift
/// let proxy = try await CappingProxyFixture.start(backendPort: nginx.port, bytesPerSecond: 256 << 10)
/// defer { proxy.shutdown() }
/// ```
public final class CappingProxyFixture: @unchecked Sendable {
    // Safe to share: every stored property is immutable.

    /// One request nghttpx answered.
    public struct Request: Sendable, Equatable {
        /// The client's port: one per connection.
        public let clientPort: Int
        /// The protocol ALPN agreed on (`h2`, `http/1.1`), `-` when none was.
        public let protocolName: String
        public let status: Int
        public let path: String
    }

    /// The HTTPS port on 127.0.0.1.
    public var port: Int { server.port }
    /// The certificate's PEM file: pass it to clients as their CA file.
    public let certificatePath: String

    private let server: LoopbackServerProcess

    private init(server: LoopbackServerProcess, certificatePath: String) {
        self.server = server
        self.certificatePath = certificatePath
    }

    /// Starts nghttpx before `backendPort` with each client connection capped at `bytesPerSecond` (nghttpx's
    /// `--write-rate` and `--write-burst`, refilled once a second), and returns once it answers.
    ///
    /// Throws `TestSupportError.proxyFailedToStart` naming the Debian package when nghttpx is not installed.
    public static func start(backendPort: Int, bytesPerSecond: Int) async throws -> CappingProxyFixture {
        let (server, certificate) = try await LoopbackServerProcess.start(
            "nghttpx", prefix: "braid-nghttpx", missing: "apt-get install nghttp2-proxy",
            prepare: { directory in
                // An empty configuration: Debian's adds a frontend on port 3000 to the one given here.
                try Data().write(to: directory.appending("nghttpx.conf"))
                return try await SelfSignedCertificate.generate(in: directory.url)
            },
            log: { directory in (try? String(contentsOf: directory.appending("error.log"), encoding: .utf8)) ?? "" }
        ) { port, directory, certificate in
            [
                "--conf=\(directory.appending("nghttpx.conf").path)", "--frontend=127.0.0.1,\(port)",
                "--backend=127.0.0.1,\(backendPort)", "--write-rate=\(bytesPerSecond)",
                "--write-burst=\(bytesPerSecond)", "--workers=1", "--no-ocsp",
                "--accesslog-file=\(directory.appending("access.log").path)",
                "--accesslog-format=$remote_port $alpn $status $path",
                "--errorlog-file=\(directory.appending("error.log").path)", certificate.keyPath,
                certificate.certificatePath,
            ]
        }
        return CappingProxyFixture(server: server, certificatePath: certificate.certificatePath)
    }

    /// The HTTPS URL of `path` through the proxy.
    public func url(_ path: String) -> String {
        "https://127.0.0.1:\(port)\(path)"
    }

    /// The requests answered so far, in the order logged.
    public func requests() -> [Request] {
        let log = (try? String(contentsOf: server.directory.appending("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 4, let clientPort = Int(fields[0]), let status = Int(fields[2]) else { return nil }
            return Request(
                clientPort: clientPort, protocolName: String(fields[1]), status: status, path: String(fields[3]))
        }
    }

    /// Stops nghttpx and deletes its directory; safe to call more than once.
    public func shutdown() {
        server.shutdown()
    }
}
