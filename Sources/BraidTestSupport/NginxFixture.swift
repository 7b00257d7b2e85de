import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real nginx on free 127.0.0.1 ports, for testing a downloader against the server most people download from.
///
/// Each fixture owns a private temporary directory holding its configuration, logs, pid file and (with TLS)
/// certificate. Start it with `start`, and call `shutdown()` when done, typically in a `defer`:
///
/// ```swift
/// let nginx = try await NginxFixture.start(.init(locations: [.prefix("/throttled/", bytesPerSecond: 1 << 20)]))
/// defer { nginx.shutdown() }
/// ```
public final class NginxFixture: @unchecked Sendable {
    // Safe to share: every stored property is immutable except `isShutDown`, which is a `LockedValue`.

    /// The plain HTTP port on 127.0.0.1.
    public let port: Int
    /// The HTTPS port on 127.0.0.1, when the configuration enables TLS.
    public let tlsPort: Int?
    /// The port for HTTP/2 in clear text with prior knowledge (h2c), when the configuration offers HTTP/2.
    public let h2cPort: Int?
    /// The directory nginx serves at `/`; tests put their files here.
    public let documentRoot: URL
    /// The self-signed certificate's PEM file, when TLS is enabled: pass it to clients as their CA file.
    public let certificatePath: String?

    private let directory: TemporaryDirectory
    private let process: ChildProcess
    private let isShutDown = LockedValue(false)

    private init(
        port: Int,
        tlsPort: Int?,
        h2cPort: Int?,
        documentRoot: URL,
        certificatePath: String?,
        directory: TemporaryDirectory,
        process: ChildProcess
    ) {
        self.port = port
        self.tlsPort = tlsPort
        self.h2cPort = h2cPort
        self.documentRoot = documentRoot
        self.certificatePath = certificatePath
        self.directory = directory
        self.process = process
    }

    deinit {
        assert(isShutDown.withLock { $0 }, "NginxFixture on port \(port) was not shut down")
    }

    /// The master process's id; its workers are its children.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Starts nginx and returns once it answers HTTP requests.
    ///
    /// Ports are picked free at run time; if another process takes one before nginx binds it, the start is
    /// retried on new ports.
    public static func start(_ configuration: Configuration = Configuration()) async throws -> NginxFixture {
        let directory = try TemporaryDirectory(prefix: "braid-nginx")
        do {
            return try await start(configuration, in: directory)
        } catch {
            directory.remove()
            throw error
        }
    }

    private static func start(_ configuration: Configuration, in directory: TemporaryDirectory) async throws
        -> NginxFixture
    {
        let fileManager = FileManager.default
        for subdirectory in ["logs", "temp", "tls"] {
            try fileManager.createDirectory(at: directory.appending(subdirectory), withIntermediateDirectories: true)
        }
        let documentRoot = configuration.documentRoot ?? directory.appending("www")
        try fileManager.createDirectory(at: documentRoot, withIntermediateDirectories: true)
        let certificate: SelfSignedCertificate? =
            configuration.enablesTLS ? try await SelfSignedCertificate.generate(in: directory.appending("tls")) : nil
        let configURL = directory.appending("nginx.conf")
        let errorLogURL = directory.appending("logs/error.log")
        let token = UUID().uuidString

        let attempts = 5
        for attempt in 1...attempts {
            let port = try FreePort.pick()
            let tlsPort = certificate == nil ? nil : try FreePort.pick()
            let h2cPort = configuration.offersHTTP2 ? try FreePort.pick() : nil
            let configFile = ConfigFile(
                configuration: configuration,
                prefix: directory.url.path,
                documentRoot: documentRoot.path,
                port: port,
                tls: certificate.map { (tlsPort!, $0.certificatePath, $0.keyPath) },
                h2cPort: h2cPort,
                readinessToken: token,
                runsWorkersAsRoot: geteuid() == 0
            )
            try configFile.text.write(to: configURL, atomically: true, encoding: .utf8)
            try? fileManager.removeItem(at: errorLogURL)

            let process = try ChildProcess(
                configuration.executablePath,
                ["-p", directory.url.path, "-c", configURL.path, "-e", errorLogURL.path]
            )
            let errorLog = { Self.read(errorLogURL) + process.standardError }
            do {
                try await Polling.until(
                    "nginx on 127.0.0.1:\(port) to answer", timeout: .seconds(15), evidence: errorLog
                ) {
                    process.status != nil || isReady(port: port, token: token)
                }
            } catch {
                process.stop(signal: SIGKILL)
                throw TestSupportError.nginxFailedToStart("no answer on port \(port)", errorLog: errorLog())
            }
            guard let status = process.status else {
                return NginxFixture(
                    port: port,
                    tlsPort: tlsPort,
                    h2cPort: h2cPort,
                    documentRoot: documentRoot,
                    certificatePath: certificate?.certificatePath,
                    directory: directory,
                    process: process
                )
            }
            let log = errorLog()
            guard log.contains("Address already in use"), attempt < attempts else {
                throw TestSupportError.nginxFailedToStart("nginx \(status)", errorLog: log)
            }
        }
        preconditionFailure("Invalid state: the last start attempt either returns or throws")
    }

    /// The URL of `path` on this server, e.g. `url("/file.bin")` or `url("/file.bin", tls: true)`; with `h2c`, on
    /// the port that speaks HTTP/2 in clear text only (prior knowledge).
    public func url(_ path: String, tls: Bool = false, h2c: Bool = false) -> String {
        precondition(path.hasPrefix("/"), "a URL path starts with '/'")
        if h2c {
            guard let h2cPort else { preconditionFailure("HTTP/2 is not offered on this NginxFixture") }
            return "http://127.0.0.1:\(h2cPort)\(path)"
        }
        guard tls else { return "http://127.0.0.1:\(port)\(path)" }
        guard let tlsPort else { preconditionFailure("TLS is not enabled on this NginxFixture") }
        return "https://127.0.0.1:\(tlsPort)\(path)"
    }

    /// Every request logged so far, oldest first.
    ///
    /// nginx logs a request when it finishes with it, which may be a moment after the client has its last byte;
    /// use `waitForAccessLog(count:timeout:)` when counting requests right after a download.
    public func accessLog() -> [AccessLogEntry] {
        Self.read(directory.appending("logs/access.log")).split(separator: "\n").compactMap(AccessLogEntry.init(line:))
    }

    /// Waits until at least `count` requests are logged, and returns them all.
    public func waitForAccessLog(count: Int, timeout: Duration = .seconds(10)) async throws -> [AccessLogEntry] {
        try await waitForAccessLog("\(count) access log entries", timeout: timeout) { $0.count >= count }
    }

    /// Waits until the requests logged so far satisfy `condition` (described by `what`), and returns them all.
    public func waitForAccessLog(
        _ what: String, timeout: Duration = .seconds(10), until condition: ([AccessLogEntry]) -> Bool
    ) async throws -> [AccessLogEntry] {
        var entries: [AccessLogEntry] = []
        try await Polling.until(what, timeout: timeout, evidence: { self.errorLog }) {
            entries = accessLog()
            return condition(entries)
        }
        return entries
    }

    /// nginx's error log, for the message of a failing test.
    public var errorLog: String {
        Self.read(directory.appending("logs/error.log"))
    }

    /// Stops nginx and its workers and deletes the fixture's directory; safe to call more than once.
    ///
    /// Fast shutdown (SIGTERM) rather than graceful (SIGQUIT), so a throttled transfer still in flight cannot
    /// delay the test; SIGKILL for master and workers if nginx has not exited after five seconds.
    public func shutdown() {
        let wasShutDown = isShutDown.withLock { isShutDown in
            defer { isShutDown = true }
            return isShutDown
        }
        guard !wasShutDown else { return }
        let workers = Self.children(of: processIdentifier)
        if process.stop(signal: SIGTERM, gracePeriod: .seconds(5)) == .signalled(SIGKILL) {
            for worker in workers { kill(worker, SIGKILL) }
        }
        directory.remove()
    }

    /// The process ids of `pid`'s children, from Linux's `/proc`; empty where that is unavailable.
    static func children(of pid: Int32) -> [Int32] {
        read(URL(fileURLWithPath: "/proc/\(pid)/task/\(pid)/children")).split(separator: " ").compactMap { Int32($0) }
    }

    private static func isReady(port: Int, token: String) -> Bool {
        guard let socket = try? LoopbackSocket() else { return false }
        defer { socket.close() }
        let request = "GET \(ConfigFile.readinessPath) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"
        guard let response = socket.exchange(port: port, request: request, timeoutSeconds: 2) else { return false }
        return String(decoding: response, as: UTF8.self).contains("\(ConfigFile.readinessHeader): \(token)")
    }

    private static func read(_ url: URL) -> String {
        guard let data = FileManager.default.contents(atPath: url.path) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }
}
