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

    /// How many attempts the first request to a server gets after it failed below HTTP as `failure` (nil: it
    /// failed with a status). A name that does not resolve will not resolve on a retry (curl and aria2c fail at
    /// once), and a server that refuses the very first connection is tried once more, not for seconds on end.
    /// Later on (mid-download, after a pause) a server restart is plausible, and the usual attempts apply.
    func attemptsForFirstContact(after failure: TransportFailure.Kind?) -> Int {
        switch failure {
        case .nameNotResolved: 1
        case .couldNotConnect: min(2, maximumAttempts)
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
