/// The one error type of the Braid library: what went wrong, in a sentence a user can act on, and the domain it
/// belongs to, so that a program (the `braid` command among them) can map it to an exit status.
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
    /// One line saying what happened and, where there is one, what to do about it.
    public let message: String
    /// The HTTP status of the response that caused the failure, when there was one.
    public let httpStatus: Int?

    /// - Parameter message: may quote what a server or a file said; control characters in it are escaped and
    ///   URL passwords hidden (see `PrintableText`), so the message is always safe to print.
    public init(_ code: Code, _ message: String, httpStatus: Int? = nil) {
        self.code = code
        self.message = PrintableText.sanitised(message)
        self.httpStatus = httpStatus
    }

    public var description: String { message }

    static func usage(_ message: String) -> BraidError { BraidError(.usage, message) }
    static func localIO(_ message: String) -> BraidError { BraidError(.localIO, message) }
    static func network(_ message: String) -> BraidError { BraidError(.network, message) }
    static func protocolViolation(_ message: String, status: Int? = nil) -> BraidError {
        BraidError(.protocolViolation, message, httpStatus: status)
    }
    static func integrity(_ message: String) -> BraidError { BraidError(.integrity, message) }
    static func manifest(_ message: String) -> BraidError { BraidError(.manifest, message) }
}
