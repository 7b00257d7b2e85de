/// What a failed request means for the download.
enum FailureKind: Equatable, Sendable {
    /// Worth retrying: the network dropped, the server is busy, a connection stalled. `code` is the domain of the
    /// error reported if retries run out.
    case transient(BraidError.Code, String, retryAfter: Double?, refusedConnection: Bool)
    /// Retrying cannot help.
    case fatal(BraidError.Code, String)

    var message: String {
        switch self {
        case let .transient(_, message, _, _): message
        case let .fatal(_, message): message
        }
    }

    /// Classifies a request that failed below HTTP.
    static func classify(_ failure: TransportFailure) -> FailureKind {
        let detail = failure.detail
        switch failure.kind {
        case .nameNotResolved, .couldNotConnect, .timedOut, .connectionBroken, .other:
            return .transient(.network, detail, retryAfter: nil, refusedConnection: false)
        case .tooManyRedirects:
            return .fatal(.protocolViolation, "too many redirects (a redirect loop?): \(detail)")
        case .malformedResponse:
            // Retried as a response that broke the protocol is, and said as one when retries run out (exit 5).
            return .transient(
                .protocolViolation, "the server's answer is not valid HTTP: \(detail)", retryAfter: nil,
                refusedConnection: false)
        case .oversizedHead:
            // Sent again to every request: not retried.
            return .fatal(.protocolViolation, "the server's response headers are larger than libcurl takes: \(detail)")
        case .unsupportedScheme:
            return .fatal(.protocolViolation, "refusing a URL or redirect that is not http or https: \(detail)")
        case .malformedURL:
            return .fatal(.usage, "malformed URL: \(detail)")
        case .untrustedCertificate:
            return .fatal(.network, "TLS certificate not trusted: \(detail)")
        case .tlsHandshakeFailed:
            return .fatal(.network, "TLS handshake failed: \(detail)")
        case .writeAborted:
            return .fatal(.localIO, "writing the download failed: \(detail)")
        }
    }

    /// What would help after a request failed below HTTP, if anything but waiting can.
    static func remedies(for failure: TransportFailure.Kind) -> [BraidError.Remedy] {
        failure == .untrustedCertificate ? [.trustCertificate] : []
    }

    /// Classifies an HTTP error status; `wallClock` is when it was received, in seconds since 1970, which a
    /// `Retry-After` date is counted from.
    static func classify(status: Int, retryAfter: String?, wallClock: Double) -> FailureKind {
        let delay = retryAfter.flatMap { RetryAfter.seconds($0, wallClock: wallClock) }
        switch status {
        case 429, 503:
            return .transient(
                .protocolViolation,
                "the server answered \(status) (busy)",
                retryAfter: delay,
                refusedConnection: true
            )
        case 408, 500, 502, 504:
            return .transient(
                .protocolViolation, "the server answered \(status)", retryAfter: delay, refusedConnection: false)
        case 401, 403:
            return .fatal(.protocolViolation, "the server refused access (HTTP \(status))")
        case 404, 410:
            return .fatal(.protocolViolation, "the server has no such file (HTTP \(status))")
        default:
            return status >= 500
                ? .transient(
                    .protocolViolation, "the server answered \(status)", retryAfter: delay, refusedConnection: false)
                : .fatal(.protocolViolation, "the server answered HTTP \(status)")
        }
    }
}
