/// A request that failed below HTTP (no connection, a broken one, TLS, a write refused), in Braid's own terms: the
/// engine maps libcurl's result codes to these at its boundary (`TransportFailure+Curl.swift`), so that decisions
/// never see a libcurl type.
struct TransportFailure: Equatable, Sendable {
    enum Kind: Equatable, Sendable {
        /// The server's name, or the proxy's, did not resolve.
        case nameNotResolved
        /// No connection could be made: refused, or the host unreachable.
        case couldNotConnect
        /// The request took too long, or its speed stayed under the low-speed limit.
        case timedOut
        /// The connection broke, or the response was cut short or could not be decoded.
        case connectionBroken
        case tooManyRedirects
        /// The server's answer broke HTTP: not HTTP at all, or a head libcurl could not read (an invalid
        /// `Content-Length`, a malformed status line).
        case malformedResponse
        /// The server's response head is larger than libcurl takes: a header line over 100 KB, or over 300 KB of
        /// them in all. Only a server that breaks HTTP's norms sends one, and it sends it again to every request.
        case oversizedHead
        /// The URL, or a redirect, is not http or https.
        case unsupportedScheme
        case malformedURL
        /// The server's certificate, or the CA file meant to check it, cannot be trusted.
        case untrustedCertificate
        case tlsHandshakeFailed
        /// A write of received bytes was refused: the file could not be written, or the engine stopped the
        /// transfer on purpose.
        case writeAborted
        /// Any other failure, taken as one of the network.
        case other
    }

    var kind: Kind
    /// The most specific description of what happened, for messages.
    var detail: String
    /// The underlying library's own code, kept only for the error's cause.
    var cause: BraidError.Cause?
}
