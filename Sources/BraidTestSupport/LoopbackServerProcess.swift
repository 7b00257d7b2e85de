#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A server program on a free 127.0.0.1 port, for the fixtures that run a real one (a proxy, a shaper, a cache), with the
/// directory its configuration and logs live in: started again on a new port when the one picked was taken
/// meanwhile, returned once it accepts connections, and stopped with its directory deleted by `shutdown()`.
final class LoopbackServerProcess: @unchecked Sendable {
    // Safe to share: every stored property is immutable except `isShutDown`, which is a `LockedValue`.

    let process: ChildProcess
    /// The port on 127.0.0.1.
    let port: Int
    let directory: TemporaryDirectory
    /// How long `shutdown()` waits after SIGTERM before SIGKILL.
    private let gracePeriod: Duration
    private let isShutDown = LockedValue(false)

    private init(process: ChildProcess, port: Int, directory: TemporaryDirectory, gracePeriod: Duration) {
        self.process = process
        self.port = port
        self.directory = directory
        self.gracePeriod = gracePeriod
    }

    deinit {
        assert(isShutDown.withLock { $0 }, "\(process.executablePath) on port \(port) was not shut down")
    }

    /// Makes a directory named after `prefix`, lets `prepare` put what the server needs there, and starts
    /// `executable` with the arguments `arguments` makes for a free port, up to five times, until it is `ready`
    /// there (by default, until it accepts connections); the directory is deleted if it never is.
    ///
    /// - Parameters:
    ///   - missing: what to install, said when the executable cannot be started.
    ///   - readyWithin: how long one start may take to be ready.
    ///   - gracePeriod: how long `shutdown()` waits after SIGTERM before SIGKILL.
    ///   - log: more to quote when it fails, such as a log file in the directory.
    /// - Throws: `TestSupportError.proxyFailedToStart`, or what `prepare` or `arguments` throw.
    static func start<Prepared>(
        _ executable: String, prefix: String, missing: String,
        prepare: (TemporaryDirectory) async throws -> Prepared,
        ready: @escaping @Sendable (_ port: Int) -> Bool = accepts(port:),
        readyWithin: Duration = .seconds(15),
        gracePeriod: Duration = .seconds(5),
        log: @escaping (TemporaryDirectory) -> String = { _ in "" },
        arguments: (_ port: Int, TemporaryDirectory, Prepared) throws -> [String]
    ) async throws -> (server: LoopbackServerProcess, prepared: Prepared) {
        let directory = try TemporaryDirectory(prefix: prefix)
        do {
            let prepared = try await prepare(directory)
            let attempts = 5
            for attempt in 1...attempts {
                let port = try FreePort.pick()
                let process: ChildProcess
                do {
                    process = try ChildProcess(executable, try arguments(port, directory, prepared))
                } catch {
                    throw TestSupportError.proxyFailedToStart(
                        "\(executable) is not installed: run scripts/install-deps (\(missing))", log: "\(error)")
                }
                let output = { process.standardOutput + process.standardError + log(directory) }
                do {
                    try await Polling.until(
                        "\(executable) on 127.0.0.1:\(port) to be ready", timeout: readyWithin, evidence: output
                    ) {
                        process.status != nil || ready(port)
                    }
                } catch {
                    process.stop(signal: SIGKILL)
                    throw TestSupportError.proxyFailedToStart("not ready on port \(port)", log: output())
                }
                guard let status = process.status else {
                    let server = LoopbackServerProcess(
                        process: process, port: port, directory: directory, gracePeriod: gracePeriod)
                    return (server, prepared)
                }
                guard attempt < attempts else {
                    throw TestSupportError.proxyFailedToStart("\(executable) \(status)", log: output())
                }
            }
            preconditionFailure("Invalid state: the last start attempt either returns or throws")
        } catch {
            directory.remove()
            throw error
        }
    }

    /// Stops the server and deletes its directory; safe to call more than once. A server that had to be killed has
    /// its children killed too (Varnish's manager leaves its cache process otherwise).
    func shutdown() {
        let wasShutDown = isShutDown.withLock { isShutDown in
            defer { isShutDown = true }
            return isShutDown
        }
        guard !wasShutDown else { return }
        let children = NginxFixture.children(of: process.processIdentifier)
        if process.stop(signal: SIGTERM, gracePeriod: gracePeriod) == .signalled(SIGKILL) {
            for child in children { kill(child, SIGKILL) }
        }
        directory.remove()
    }

    /// Whether a server accepts connections on `port`.
    static func accepts(port: Int) -> Bool {
        guard let socket = try? LoopbackSocket() else { return false }
        defer { socket.close() }
        return socket.accepts(port: port)
    }
}
