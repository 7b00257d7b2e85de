import CCurl
import Foundation

/// When and how often a failed request is tried again: exponential backoff with jitter, `Retry-After` honoured,
/// and a bound on consecutive failures that made no progress.
struct RetryPolicy: Sendable {
    var maximumAttempts = 6
    var baseDelay: Double = 0.25
    var maximumDelay: Double = 30
    /// A `Retry-After` longer than this is not waited for: the download fails instead.
    var maximumRetryAfter: Double = 300

    /// The delay before attempt `attempt + 1` (attempt counts from 1), jittered to half to full of the backoff.
    func delay(afterAttempt attempt: Int, retryAfter: Double?, random: Double) -> Double {
        if let retryAfter { return min(retryAfter, maximumRetryAfter) }
        let backoff = min(maximumDelay, baseDelay * pow(2, Double(max(0, attempt - 1))))
        return backoff * (0.5 + 0.5 * random)
    }
}

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

    /// Classifies a libcurl result code.
    static func classify(_ code: CURLcode, detail: String) -> FailureKind {
        switch code {
        case CURLE_COULDNT_CONNECT, CURLE_OPERATION_TIMEDOUT, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING,
            CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_COULDNT_RESOLVE_HOST,
            CURLE_COULDNT_RESOLVE_PROXY, CURLE_BAD_CONTENT_ENCODING:
            return .transient(.network, detail, retryAfter: nil, refusedConnection: false)
        case CURLE_TOO_MANY_REDIRECTS:
            return .fatal(.protocolViolation, "too many redirects (a redirect loop?): \(detail)")
        case CURLE_UNSUPPORTED_PROTOCOL:
            return .fatal(.protocolViolation, "refusing a URL or redirect that is not http or https: \(detail)")
        case CURLE_URL_MALFORMAT:
            return .fatal(.usage, "malformed URL: \(detail)")
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            return .fatal(.network, "TLS certificate not trusted: \(detail) (use --cacert FILE, or --insecure)")
        case CURLE_SSL_CONNECT_ERROR:
            return .fatal(.network, "TLS handshake failed: \(detail)")
        case CURLE_WRITE_ERROR:
            return .fatal(.localIO, "writing the download failed: \(detail)")
        default:
            return .transient(.network, detail, retryAfter: nil, refusedConnection: false)
        }
    }

    /// Classifies an HTTP error status.
    static func classify(status: Int, retryAfter: String?) -> FailureKind {
        let delay = retryAfter.flatMap { RetryAfter.seconds($0) }
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

/// Parses `Retry-After`: delta-seconds or an HTTP-date (RFC 9110 §10.2.3).
enum RetryAfter {
    static func seconds(_ value: String, now: Date = Date()) -> Double? {
        let text = value.trimmingWhitespace()
        if let seconds = Int(text), seconds >= 0 { return Double(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
