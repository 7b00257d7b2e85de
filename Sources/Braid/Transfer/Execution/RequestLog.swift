import Logging

/// The `request` and `response` lines `-vv` shows (the logger's `trace` level): one of each for every HTTP request
/// Braid sends, whoever sends it (a probe and each of its redirect hops and retries, a first GET, a transfer's
/// ranges, an object store's listing pages). The one place those lines are made, so that every request shows alike:
/// its method and its URL as a log line may show it (`PrintableText.sanitised(url:)`: no password, no signature;
/// no header is ever logged, credentials among them), then the status of its answer.
///
/// There is one only for a logger at `trace`: its owner reads the level once, as it starts, and a request that is not
/// logged costs a test of nil, with no string made. A list of ten thousand small files makes a request each.
struct RequestLog: Sendable {
    private let logger: Logger

    init?(_ logger: Logger) {
        guard logger.logLevel <= .trace else { return nil }
        self.logger = logger
    }

    /// `method` to `url` is about to be sent; `details` tell it from the requests beside it (its range, its
    /// connection, its attempt).
    func sent(_ method: String, _ url: String, _ details: Logger.Metadata = [:]) {
        var metadata = details
        metadata["braid.method"] = .string(method)
        metadata["braid.source"] = .string(PrintableText.sanitised(url: url))
        logger.trace("request", metadata: metadata)
    }

    /// The request sent last (on `details`' connection, if it says) was answered with `status`, 0 when no answer
    /// came; `details` say how it ended, when not simply with its answer.
    func answered(status: Int, _ details: Logger.Metadata = [:]) {
        var metadata = details
        metadata["braid.status"] = "\(status)"
        logger.trace("response", metadata: metadata)
    }

    /// A transfer goes on with the response to a request already sent and logged (the first GET's, its body paused):
    /// no request is sent for it.
    func adopted(_ details: Logger.Metadata) {
        logger.trace("adopted", metadata: details)
    }
}

extension RequestLog {
    /// A request to log once it is sent, and its answer, by what runs it (`PoolRequest`), made only where there is a
    /// log: `log?.entry(…)`. Its answer names its URL too: requests of many files run side by side on one pool.
    struct Entry {
        let log: RequestLog
        let method: String
        let url: String
        let details: Logger.Metadata

        func sent() {
            log.sent(method, url, details)
        }

        func answered(status: Int, _ details: Logger.Metadata = [:]) {
            var metadata = details
            metadata["braid.source"] = .string(PrintableText.sanitised(url: url))
            log.answered(status: status, metadata)
        }
    }

    func entry(_ method: String, _ url: String, _ details: Logger.Metadata = [:]) -> Entry {
        Entry(log: self, method: method, url: url, details: details)
    }
}
