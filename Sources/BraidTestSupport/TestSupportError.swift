import Foundation

/// Why a piece of test plumbing (a child process, nginx, a deadline) failed, with the evidence a reader needs.
///
/// The message quotes the relevant output (stderr, nginx's error log) so that a failed test explains itself
/// without a rerun.
public struct TestSupportError: Error, CustomStringConvertible, Sendable {
    private enum Code: Sendable {
        case executableNotFound
        case launchFailed
        case timedOut
        case exitedEarly
        case nginxFailedToStart
        case proxyFailedToStart
        case commandFailed
        case systemCall
    }

    private let code: Code
    /// What happened, in one or a few lines, including any captured output that explains it.
    public let message: String
    /// The error that caused this one, if any.
    public let underlying: (any Error)?

    private init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String {
        guard let underlying else { return message }
        return "\(message) (\(underlying))"
    }

    /// The program is neither a path nor found on `PATH`: install it or pass an absolute path.
    public static func executableNotFound(_ name: String) -> TestSupportError {
        TestSupportError(.executableNotFound, "executable '\(name)' not found on PATH")
    }

    /// The program could not be started at all.
    public static func launchFailed(_ executable: String, underlying: any Error) -> TestSupportError {
        TestSupportError(.launchFailed, "could not launch \(executable)", underlying: underlying)
    }

    /// A condition did not hold before its deadline.
    public static func timedOut(_ what: String, after timeout: Duration, evidence: String = "") -> TestSupportError {
        TestSupportError(.timedOut, "timed out after \(timeout) waiting for \(what)" + Self.quoted(evidence))
    }

    /// The process exited while the caller was still waiting for a condition on it.
    public static func exitedEarly(
        _ what: String,
        status: ChildProcess.ExitStatus,
        evidence: String
    ) -> TestSupportError {
        TestSupportError(.exitedEarly, "process \(status) while waiting for \(what)" + Self.quoted(evidence))
    }

    /// nginx exited or never answered during start-up; `errorLog` is its own account of why.
    public static func nginxFailedToStart(_ reason: String, errorLog: String) -> TestSupportError {
        TestSupportError(.nginxFailedToStart, "nginx failed to start: \(reason)" + Self.quoted(errorLog))
    }

    /// A proxy (tinyproxy, microsocks) is not installed, exited or never accepted a connection during start-up.
    public static func proxyFailedToStart(_ reason: String, log: String) -> TestSupportError {
        TestSupportError(.proxyFailedToStart, "proxy failed to start: \(reason)" + Self.quoted(log))
    }

    /// A helper command (openssl, md5) exited unsuccessfully.
    public static func commandFailed(_ command: String, status: ChildProcess.ExitStatus, stderr: String)
        -> TestSupportError
    {
        TestSupportError(.commandFailed, "\(command) \(status)" + Self.quoted(stderr))
    }

    /// A system call failed; `errno` says why.
    public static func systemCall(_ name: String, errno: Int32) -> TestSupportError {
        TestSupportError(.systemCall, "\(name) failed: \(String(cString: strerror(errno))) (errno \(errno))")
    }

    private static func quoted(_ evidence: String) -> String {
        let trimmed = evidence.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return "" }
        let tail = trimmed.count > 4000 ? "…" + trimmed.suffix(4000) : Substring(trimmed)
        return ":\n" + tail
    }
}
