#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A server program started on a free 127.0.0.1 port, for the fixtures that run a real one (a proxy, a shaper):
/// started again on a new port when the one picked was taken meanwhile, and returned once it accepts connections.
enum LoopbackServerProcess {
    /// Starts `executable` with the arguments `arguments` makes for a free port, up to five times, until it accepts
    /// connections there.
    ///
    /// - Parameters:
    ///   - missing: what to install, said when the executable cannot be started.
    ///   - log: more to quote when it fails, such as its log file.
    /// - Throws: `TestSupportError.proxyFailedToStart`.
    static func start(
        _ executable: String, missing: String, log: @escaping () -> String = { "" },
        arguments: (_ port: Int) throws -> [String]
    ) async throws -> (process: ChildProcess, port: Int) {
        let attempts = 5
        for attempt in 1...attempts {
            let port = try FreePort.pick()
            let process: ChildProcess
            do {
                process = try ChildProcess(executable, try arguments(port))
            } catch {
                throw TestSupportError.proxyFailedToStart(
                    "\(executable) is not installed: run scripts/install-deps (\(missing))", log: "\(error)")
            }
            let output = { process.standardOutput + process.standardError + log() }
            do {
                try await Polling.until(
                    "\(executable) on 127.0.0.1:\(port) to accept", timeout: .seconds(15), evidence: output
                ) {
                    process.status != nil || accepts(port: port)
                }
            } catch {
                process.stop(signal: SIGKILL)
                throw TestSupportError.proxyFailedToStart("no connection accepted on port \(port)", log: output())
            }
            guard let status = process.status else { return (process, port) }
            guard attempt < attempts else {
                throw TestSupportError.proxyFailedToStart("\(executable) \(status)", log: output())
            }
        }
        preconditionFailure("Invalid state: the last start attempt either returns or throws")
    }

    private static func accepts(port: Int) -> Bool {
        guard let socket = try? LoopbackSocket() else { return false }
        defer { socket.close() }
        return socket.accepts(port: port)
    }
}
