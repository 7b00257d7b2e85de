/// The one error type of the Braid library: what went wrong, in a sentence a user can act on, and the domain it
/// belongs to, so that a program (the `braid` command among them) can map it to an exit status.
///
/// The message speaks the library's language: it says what happened, never which flag of some program would
/// help. What would help is in ``remedies``, the input that was refused in ``option``, and the failure underneath
/// (an `Errno`, a libcurl code) in ``cause``; a program words those in its own terms.
public struct BraidError: Error, CustomStringConvertible, Sendable {
    /// The domain of a failure; each maps to one documented exit status of the `braid` command.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: String, Sendable {
            case usage, localIO, network, protocolViolation, integrity, manifest, fileExists, interrupted, cancelled
        }
        fileprivate let base: Base

        /// Invalid arguments or options, found before any network traffic.
        public static let usage = Code(base: .usage)
        /// The local file system failed: disk full, permissions, a missing directory.
        public static let localIO = Code(base: .localIO)
        /// The network failed and retries did not help: DNS, connect, TLS, timeouts.
        public static let network = Code(base: .network)
        /// The server answered in a way that cannot be used: an HTTP error, a wrong range, a redirect loop.
        public static let protocolViolation = Code(base: .protocolViolation)
        /// The downloaded bytes do not match the expected length or digest.
        public static let integrity = Code(base: .integrity)
        /// The sidecar manifest is corrupt, foreign, or does not match its partial file.
        public static let manifest = Code(base: .manifest)
        /// The destination already holds a complete file.
        public static let fileExists = Code(base: .fileExists)
        /// The download was interrupted by a signal; its progress was saved.
        public static let interrupted = Code(base: .interrupted)
        /// The download was cancelled through the API.
        public static let cancelled = Code(base: .cancelled)

        public var description: String { base.rawValue }
    }

    /// The failure's domain.
    public let code: Code
    /// One line saying what happened, in the library's terms.
    public let message: String
    /// The HTTP status of the response that caused the failure, when there was one.
    public let httpStatus: Int?
    /// What would let the download succeed, as alternatives, the most direct first; empty when nothing the caller
    /// can change would help.
    public let remedies: [Remedy]
    /// For a usage error, the option or argument that was refused.
    public let option: Option?
    /// The failure underneath, when there was one: the `Errno` of a system call, or libcurl's result code.
    public let cause: Cause?

    /// - Parameter message: may quote what a server or a file said; control characters in it are escaped and
    ///   URL passwords hidden (see `PrintableText`), so the message is always safe to print.
    public init(
        _ code: Code,
        _ message: String,
        httpStatus: Int? = nil,
        remedies: [Remedy] = [],
        option: Option? = nil,
        cause: Cause? = nil
    ) {
        self.code = code
        self.message = PrintableText.sanitised(message)
        self.httpStatus = httpStatus
        self.remedies = remedies
        self.option = option
        self.cause = cause
    }

    public var description: String { message }

    static func usage(_ message: String, option: Option? = nil) -> BraidError {
        BraidError(.usage, message, option: option)
    }
    static func localIO(_ message: String, cause: Cause? = nil) -> BraidError {
        BraidError(.localIO, message, cause: cause)
    }
    static func network(_ message: String) -> BraidError { BraidError(.network, message) }
    static func protocolViolation(_ message: String, status: Int? = nil) -> BraidError {
        BraidError(.protocolViolation, message, httpStatus: status)
    }
    static func integrity(_ message: String) -> BraidError { BraidError(.integrity, message) }
    static func manifest(_ message: String) -> BraidError { BraidError(.manifest, message) }

    /// The same failure, its message saying what was under way (`listing s3://b/p/: …`): for a step whose errors
    /// come from code that does not know what it was asked to do for.
    func doing(_ what: String) -> BraidError {
        BraidError(
            code, "\(what): \(message)", httpStatus: httpStatus, remedies: remedies, option: option, cause: cause)
    }
}
