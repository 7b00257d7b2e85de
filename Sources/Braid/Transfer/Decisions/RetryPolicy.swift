import CCurl

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// When and how often a failed request is tried again: exponential backoff with jitter, `Retry-After` honoured,
/// and a bound on consecutive failures that made no progress.
struct RetryPolicy: Sendable {
    var maximumAttempts = 6
    var baseDelay: Double = 0.25
    var maximumDelay: Double = 30
    /// A `Retry-After` longer than this is not waited for: the download fails instead.
    var maximumRetryAfter: Double = 300

    /// Why a request that asked to be retried too late was not: `retryAfter` may be any size, even infinite.
    static func refusal(_ message: String, retryAfter: Double) -> String {
        "\(message) and asked to retry after \(Formatting.fixed(retryAfter, digits: 0)) s"
    }

    /// How many attempts the first request to a server gets after libcurl failed with `curlCode`. A name that
    /// does not resolve will not resolve on a retry (curl and aria2c fail at once), and a server that refuses the
    /// very first connection is tried once more, not for seconds on end. Later on (mid-download, after a pause)
    /// a server restart is plausible, and the usual attempts apply.
    func attemptsForFirstContact(curlCode: Int?) -> Int {
        switch curlCode.map({ CURLcode(rawValue: UInt32($0)) }) {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: 1
        case CURLE_COULDNT_CONNECT: min(2, maximumAttempts)
        default: maximumAttempts
        }
    }

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
            return .fatal(.network, "TLS certificate not trusted: \(detail)")
        case CURLE_SSL_CONNECT_ERROR:
            return .fatal(.network, "TLS handshake failed: \(detail)")
        case CURLE_WRITE_ERROR:
            return .fatal(.localIO, "writing the download failed: \(detail)")
        default:
            return .transient(.network, detail, retryAfter: nil, refusedConnection: false)
        }
    }

    /// What would help after a libcurl failure, if anything but waiting can.
    static func remedies(for code: CURLcode) -> [BraidError.Remedy] {
        switch code {
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM: [.trustCertificate]
        default: []
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
        // Delta-seconds of any size: a number past every integer type is a very long wait, not a missing one.
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return Double(text) }
        guard let date = HTTPDate.parse(text) else { return nil }
        return max(0, date - now.timeIntervalSince1970)
    }
}

/// The preferred HTTP-date form, IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT` (RFC 9110 §5.6.7).
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Seconds since 1970, or nil if `text` is not an IMF-fixdate.
    static func parse(_ text: String) -> Double? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
            let day = Int(parts[1]), let month = months.firstIndex(of: String(parts[2])), let year = Int(parts[3])
        else { return nil }
        let clock = parts[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (1...31).contains(day), (0...23).contains(clock[0]), (0...59).contains(clock[1]),
            (0...60).contains(clock[2]), (1970...9999).contains(year)
        else { return nil }
        var time = tm()
        time.tm_year = Int32(year - 1900)
        time.tm_mon = Int32(month)
        time.tm_mday = Int32(day)
        time.tm_hour = Int32(clock[0])
        time.tm_min = Int32(clock[1])
        time.tm_sec = Int32(clock[2])
        return Double(timegm(&time))
    }
}
