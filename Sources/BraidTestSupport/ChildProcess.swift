import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A program started by a test, with its stdout and stderr captured to files.
///
/// Capturing to files rather than pipes means a chatty child can never block on a full pipe while the test is
/// busy elsewhere, and the test can poll the output mid-run ("stderr says it resumed", "the part file has N bytes").
/// Every wait has a deadline and polls; nothing sleeps for a fixed time hoping the child is done.
///
/// Not Foundation's `Process`: on Linux it passes the spawning thread's signal mask on to the child, and the
/// threads Swift concurrency runs tests on block SIGINT and SIGTERM, so a test could not interrupt its child.
public final class ChildProcess: @unchecked Sendable {
    // Safe to share: the stored properties are immutable and the exit status lives in a `LockedValue`.

    /// How the process ended: a normal exit with a code, or death by a signal.
    public enum ExitStatus: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        /// Whether the process exited normally with code 0.
        public var isSuccess: Bool { self == .exited(0) }

        public var description: String {
            switch self {
            case .exited(let code): "exited with code \(code)"
            case .signalled(let signal): "killed by signal \(signal)"
            }
        }
    }

    /// The finished run of a program started with `run`.
    public struct Completed: Sendable {
        /// How the program ended.
        public let status: ExitStatus
        /// Everything the program wrote to stdout, decoded as UTF-8.
        public let standardOutput: String
        /// Everything the program wrote to stderr, decoded as UTF-8.
        public let standardError: String
    }

    /// The absolute path of the program that was started.
    public let executablePath: String
    /// The arguments it was given, without the program name.
    public let arguments: [String]
    /// The operating system's id for the process.
    public let processIdentifier: pid_t

    private let captureDirectory: TemporaryDirectory
    /// `nil` until `waitpid` has reaped the process; reaping happens in `status`, under the lock.
    private let exitStatus = LockedValue<ExitStatus?>(nil)

    /// Starts `executable` (a path, or a name looked up on `PATH`) with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment; `nil` inherits this process's.
    ///   - newProcessGroup: whether the child leads a process group of its own, which `sendToGroup(_:)` signals
    ///     as a terminal signals its foreground job (Ctrl-C).
    public init(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String]? = nil,
        newProcessGroup: Bool = false
    ) throws {
        let executablePath = try Self.resolve(executable)
        let captureDirectory = try TemporaryDirectory(prefix: "braid-child")
        do {
            processIdentifier = try Spawn.launch(
                executablePath,
                arguments: arguments,
                environment: environment,
                standardOutput: captureDirectory.appending("stdout").path,
                standardError: captureDirectory.appending("stderr").path,
                newProcessGroup: newProcessGroup
            )
        } catch {
            captureDirectory.remove()
            throw TestSupportError.launchFailed(executablePath, underlying: error)
        }
        self.executablePath = executablePath
        self.arguments = arguments
        self.captureDirectory = captureDirectory
    }

    /// Kills and reaps a child the test forgot (or failed before stopping), so no test leaves processes behind.
    deinit {
        if status == nil {
            kill(processIdentifier, SIGKILL)
            var rawStatus: Int32 = 0
            while waitpid(processIdentifier, &rawStatus, 0) == -1 && errno == EINTR {}
        }
        captureDirectory.remove()
    }

    /// Runs a program to completion and returns its status and output.
    ///
    /// If it outlives `timeout` it is killed and `TestSupportError.timedOut` is thrown with its stderr.
    public static func run(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String]? = nil,
        timeout: Duration = .seconds(60)
    ) async throws -> Completed {
        let child = try ChildProcess(executable, arguments, environment: environment)
        let status: ExitStatus
        do {
            status = try await child.waitForExit(timeout: timeout)
        } catch {
            child.stop(signal: SIGKILL)
            throw error
        }
        return Completed(status: status, standardOutput: child.standardOutput, standardError: child.standardError)
    }

    /// The exit status, or `nil` while the process is still running.
    public var status: ExitStatus? {
        exitStatus.withLock { status in
            if status == nil { status = Spawn.reap(processIdentifier) }
            return status
        }
    }

    /// What the process has written to stdout so far.
    public var standardOutput: String {
        Self.read(captureDirectory.appending("stdout"))
    }

    /// What the process has written to stderr so far.
    public var standardError: String {
        Self.read(captureDirectory.appending("stderr"))
    }

    /// Sends `signal` (`SIGINT`, `SIGTERM`, `SIGKILL`, …) to the process; does nothing once it has exited.
    public func send(_ signal: Int32) {
        // Checked under the lock that reaping takes, so the pid cannot be reused by another process meanwhile.
        exitStatus.withLock { status in
            if status == nil { kill(processIdentifier, signal) }
        }
    }

    /// Sends `signal` to every process in the group the child leads (started with `newProcessGroup`), as a
    /// terminal sends SIGINT to its foreground job on Ctrl-C; does nothing once the child has exited.
    public func sendToGroup(_ signal: Int32) {
        // While the leader is unreaped, its pid is still the group's id and cannot name another group.
        exitStatus.withLock { status in
            if status == nil { kill(-processIdentifier, signal) }
        }
    }

    /// Waits until the process exits and returns how it ended.
    ///
    /// Throws `TestSupportError.timedOut`, leaving the process running, if it is still alive after `timeout`.
    @discardableResult
    public func waitForExit(timeout: Duration) async throws -> ExitStatus {
        try await Polling.until("\(describe()) to exit", timeout: timeout, evidence: { self.standardError }) {
            self.status != nil
        }
        return status!
    }

    /// Waits until `condition` holds, for example "stderr contains X" or "a file reached N bytes".
    ///
    /// Fails fast with `TestSupportError.exitedEarly` if the process exits first and the condition still does
    /// not hold, so a crashed child does not cost the whole timeout.
    public func waitUntil(
        _ what: String,
        timeout: Duration,
        condition: () throws -> Bool
    ) async throws {
        try await Polling.until(what, timeout: timeout, evidence: { self.standardError }) {
            if try condition() { return true }
            if let status = self.status, !(try condition()) {
                throw TestSupportError.exitedEarly(what, status: status, evidence: self.standardError)
            }
            return false
        }
    }

    /// Waits until the process's stderr contains `text`.
    public func waitUntilStandardError(contains text: String, timeout: Duration) async throws {
        try await waitUntil("stderr of \(describe()) to contain '\(text)'", timeout: timeout) {
            self.standardError.contains(text)
        }
    }

    /// Waits until the process's stdout contains `text`.
    public func waitUntilStandardOutput(contains text: String, timeout: Duration) async throws {
        try await waitUntil("stdout of \(describe()) to contain '\(text)'", timeout: timeout) {
            self.standardOutput.contains(text)
        }
    }

    /// Sends `signal`, waits up to `gracePeriod` for the process to exit, then kills it with `SIGKILL`.
    ///
    /// Blocking rather than async so that it can run in a `defer` or a `deinit`; it returns within
    /// `gracePeriod` plus the moment the kernel needs to reap a killed process.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, gracePeriod: Duration = .seconds(5)) -> ExitStatus {
        send(signal)
        if let status = blockingWait(for: gracePeriod) { return status }
        send(SIGKILL)
        // A SIGKILLed process cannot refuse to die; the wait only covers the kernel tearing it down.
        return blockingWait(for: .seconds(60)) ?? .signalled(SIGKILL)
    }

    private func blockingWait(for duration: Duration) -> ExitStatus? {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            if let status { return status }
            usleep(2_000)
        }
        return status
    }

    private func describe() -> String {
        "\((executablePath as NSString).lastPathComponent) (pid \(processIdentifier))"
    }

    private static func read(_ url: URL) -> String {
        guard let data = FileManager.default.contents(atPath: url.path) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    private static func resolve(_ executable: String) throws -> String {
        if executable.contains("/") { return executable }
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in searchPath.split(separator: ":") {
            let candidate = "\(directory)/\(executable)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw TestSupportError.executableNotFound(executable)
    }
}
