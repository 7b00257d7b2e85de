import CCurl
import Logging

#if canImport(Glibc)
    import Glibc
#endif

extension ObjectStore {
    /// One answer of the store, its body whole: a listing page or an error document.
    struct Response {
        var headers: ResponseHeaders
        var body: [UInt8]
    }

    /// The most bytes of a response kept: a page of 1,000 keys of 1,024 bytes, percent-encoded, is under 8 MiB.
    static let maximumResponseBytes = 16 << 20

    /// GETs `url` with the store's signature (for its origin only, through `EasyHandle.configure`) and returns the
    /// answer, whatever its status but one worth retrying: a failed connection or a `429`, `5xx` is tried again
    /// (backing off as `RetryPolicy` says) until `retryPolicy.maximumAttempts`. Redirects are not followed: S3 sends
    /// one for a bucket in another region, and its error document says so. Each request and its answer are logged
    /// to `log`, as a download's are: `-vv` shows them.
    static func get(
        _ url: String, options: RequestOptions, headers: [String] = [], retryPolicy: RetryPolicy, log: RequestLog?,
        isCancelled: () -> Bool
    ) throws(BraidError) -> Response {
        var attempt = 0
        while true {
            attempt += 1
            guard !isCancelled() else { throw BraidError(.cancelled, "cancelled") }
            let kind: FailureKind
            let retryAfter: Double?
            let logged = log?.entry("GET", url, ["braid.attempt": "\(attempt)"])
            logged?.sent()
            switch perform(url, options: options, headers: headers) {
            case let .success(response):
                let status = response.headers.status
                logged?.answered(status: status)
                guard [429, 500, 502, 503, 504].contains(status) else { return response }
                kind = FailureKind.classify(
                    status: status, retryAfter: response.headers["retry-after"], wallClock: TransferEngine.wallClock())
                guard case let .transient(_, _, delay, _) = kind, attempt < retryPolicy.maximumAttempts else {
                    return response
                }
                retryAfter = delay
            case let .failure(failure):
                logged?.answered(status: 0, ["braid.result": "\(failure.kind): \(failure.detail)"])
                kind = FailureKind.classify(failure)
                if case let .fatal(code, message) = kind {
                    throw BraidError(
                        code, message, remedies: FailureKind.remedies(for: failure.kind), cause: failure.cause)
                }
                guard attempt < retryPolicy.attemptsForFirstContact(after: failure.kind) else {
                    let message = attempt == 1 ? kind.message : "\(kind.message); gave up after \(attempt) attempts"
                    throw BraidError(.network, message, cause: failure.cause)
                }
                retryAfter = nil
            }
            if let retryAfter, retryAfter > retryPolicy.maximumRetryAfter {
                throw .protocolViolation(RetryPolicy.refusal(kind.message, retryAfter: retryAfter))
            }
            let delay = retryPolicy.delay(
                afterAttempt: attempt, retryAfter: retryAfter, random: Double.random(in: 0...1))
            try sleep(seconds: delay, isCancelled: isCancelled)
        }
    }

    /// One request: the response, or how it failed below HTTP.
    private enum Outcome {
        case success(Response)
        case failure(TransportFailure)
    }

    private static func perform(_ url: String, options: RequestOptions, headers: [String]) -> Outcome {
        let handle = EasyHandle()
        let collector = ResponseCollector()
        handle.configure(url: url, options: options, headers: headers)
        let context = Unmanaged.passUnretained(collector).toOpaque()
        handle.set(CURLOPT_HEADERDATA, pointer: context)
        handle.set(CURLOPT_HEADERFUNCTION, callback: ResponseCollector.headerCallback)
        handle.set(CURLOPT_WRITEDATA, pointer: context)
        handle.set(CURLOPT_WRITEFUNCTION, callback: ResponseCollector.writeCallback)
        let code = withExtendedLifetime(collector) { handle.perform() }
        if collector.overflowed {
            return .failure(
                TransportFailure(
                    kind: .connectionBroken,
                    detail: "the answer to \(url) is longer than \(maximumResponseBytes >> 20) MiB"))
        }
        guard code == CURLE_OK else {
            return .failure(
                TransportFailure(code, detail: handle.describe(code), inHead: collector.headers.isHeadOpen))
        }
        return .success(Response(headers: collector.headers, body: collector.body))
    }

    private static func sleep(seconds: Double, isCancelled: () -> Bool) throws(BraidError) {
        var left = seconds
        while left > 0 {
            guard !isCancelled() else { throw BraidError(.cancelled, "cancelled while waiting to retry") }
            let step = min(0.05, left)
            usleep(UInt32(step * 1_000_000))
            left -= step
        }
    }
}

/// Gathers one response's headers and its body, up to `ObjectStore.maximumResponseBytes`.
private final class ResponseCollector {
    var headers = ResponseHeaders()
    var body: [UInt8] = []
    var overflowed = false

    static func from(_ userdata: UnsafeMutableRawPointer?) -> ResponseCollector {
        Unmanaged<ResponseCollector>.fromOpaque(userdata!).takeUnretainedValue()
    }

    static let headerCallback: braid_curl_data_callback = { data, size, count, userdata in
        ResponseCollector.from(userdata).headers.consume(
            bytes: UnsafeRawBufferPointer(start: data, count: size * count))
        return size * count
    }

    static let writeCallback: braid_curl_data_callback = { data, size, count, userdata in
        let collector = ResponseCollector.from(userdata)
        guard collector.body.count + size * count <= ObjectStore.maximumResponseBytes else {
            collector.overflowed = true
            return braid_curl_abort_write
        }
        collector.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size * count))
        return size * count
    }
}
