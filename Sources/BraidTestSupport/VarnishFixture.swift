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
public final class VarnishFixture: @unchecked Sendable {
    // Safe to share: every stored property is immutable except `isShutDown`, which is a `LockedValue`.

    /// The HTTP port on 127.0.0.1.
    public let port: Int

    private let directory: TemporaryDirectory
    private let process: ChildProcess
    private let isShutDown = LockedValue(false)

    private init(port: Int, directory: TemporaryDirectory, process: ChildProcess) {
        self.port = port
        self.directory = directory
        self.process = process
    }

    deinit {
        assert(isShutDown.withLock { $0 }, "VarnishFixture on port \(port) was not shut down")
    }

    /// The `varnishd` binary, when Varnish is installed.
    public static var executablePath: String? {
        ["/usr/sbin/varnishd", "/usr/local/sbin/varnishd"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts `varnishd` caching the server on 127.0.0.1:`backendPort` and returns once it answers; a port taken
    /// before Varnish binds it is retried with another.
    public static func start(backendPort: Int) async throws -> VarnishFixture {
        guard let executable = executablePath else { throw TestSupportError.executableNotFound("varnishd") }
        let directory = try TemporaryDirectory(prefix: "braid-varnish")
        // Varnish's cache process runs as its own user, which must reach its working directory.
        chmod(directory.url.path, 0o755)
        for attempt in 1...5 {
            let port = try FreePort.pick()
            let process = try ChildProcess(
                executable,
                [
                    "-F", "-a", "127.0.0.1:\(port)", "-b", "127.0.0.1:\(backendPort)", "-n",
                    directory.appending("work").path, "-s", "malloc,512m", "-p", "default_ttl=3600",
                ])
            do {
                try await Polling.until(
                    "varnishd on 127.0.0.1:\(port) to answer", timeout: .seconds(30),
                    evidence: { process.standardOutput + process.standardError }
                ) { process.status != nil || isReady(port: port) }
            } catch {
                process.stop(signal: SIGKILL)
                directory.remove()
                throw error
            }
            if process.status == nil { return VarnishFixture(port: port, directory: directory, process: process) }
            guard attempt < 5 else {
                directory.remove()
                throw TestSupportError.commandFailed(
                    "varnishd", status: process.status!, stderr: process.standardOutput + process.standardError)
            }
        }
        preconditionFailure("Invalid state: the last start attempt either returns or throws")
    }

    /// Stops Varnish (its manager takes its cache process along) and deletes its directory; safe to call twice.
    public func shutdown() {
        let wasShutDown = isShutDown.withLock { isShutDown in
            defer { isShutDown = true }
            return isShutDown
        }
        guard !wasShutDown else { return }
        let children = NginxFixture.children(of: process.processIdentifier)
        if process.stop(signal: SIGTERM, gracePeriod: .seconds(10)) == .signalled(SIGKILL) {
            for child in children { kill(child, SIGKILL) }
        }
        directory.remove()
    }

    /// Whether Varnish answers at all: any status line will do (the backend may not have the path).
    private static func isReady(port: Int) -> Bool {
        guard let socket = try? LoopbackSocket() else { return false }
        defer { socket.close() }
        let request = "HEAD / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"
        guard let response = socket.exchange(port: port, request: request, timeoutSeconds: 2) else { return false }
        return String(decoding: response, as: UTF8.self).hasPrefix("HTTP/")
    }
}
