import CCurl

/// libcurl's multi interface: many transfers driven from one thread, sharing its cache of connections.
final class MultiHandle {
    let raw: UnsafeMutableRawPointer

    /// - Parameters:
    ///   - maximumPerHost: connections to one host at once (`CURLMOPT_MAX_HOST_CONNECTIONS`), nil for no cap;
    ///     requests beyond it wait for a connection rather than fail.
    ///   - maximumTotal: connections at once in all (`CURLMOPT_MAX_TOTAL_CONNECTIONS`), nil for no cap.
    init(maximumPerHost: Int?, maximumTotal: Int?) {
        Curl.ensureInitialised()
        guard let raw = curl_multi_init() else { fatalError("curl_multi_init failed: out of memory") }
        self.raw = raw
        // HTTP/2 streams share a connection where a request allows HTTP/2; a request made over HTTP/1.1 always has a
        // connection of its own (libcurl never pipelines HTTP/1.1).
        _ = braid_multi_setopt_long(raw, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        setStreamsPerConnection(StreamsPerConnection.unlimited)
        _ = braid_multi_setopt_long(raw, CURLMOPT_MAX_HOST_CONNECTIONS, maximumPerHost ?? 0)
        _ = braid_multi_setopt_long(raw, CURLMOPT_MAX_TOTAL_CONNECTIONS, maximumTotal ?? 0)
    }

    deinit {
        curl_multi_cleanup(raw)
    }

    /// How many idle connections the cache keeps alive for later requests (`CURLMOPT_MAXCONNECTS`).
    func setIdleConnections(_ count: Int) {
        _ = braid_multi_setopt_long(raw, CURLMOPT_MAXCONNECTS, max(1, count))
    }

    /// How many requests one HTTP/2 connection carries at most (`CURLMOPT_MAX_CONCURRENT_STREAMS`): a request beyond
    /// it on every connection to its host opens another, within the caps. Read as each request picks a connection,
    /// so a change holds from the next request on.
    func setStreamsPerConnection(_ count: Int) {
        _ = braid_multi_setopt_long(raw, CURLMOPT_MAX_CONCURRENT_STREAMS, max(1, count))
    }

    func add(_ easy: EasyHandle) {
        let code = curl_multi_add_handle(raw, easy.raw)
        precondition(code == CURLM_OK, "curl_multi_add_handle failed: \(code.rawValue)")
    }

    func remove(_ easy: EasyHandle) {
        _ = curl_multi_remove_handle(raw, easy.raw)
    }

    /// Waits until a socket is ready, another thread wakes the handle (`wake()`), or the timeout passes.
    func poll(timeoutMilliseconds: Int) {
        _ = curl_multi_poll(raw, nil, 0, Int32(clamping: timeoutMilliseconds), nil)
    }

    /// Moves every transfer forward as far as its socket allows, running the callbacks.
    func perform() -> Int {
        var running: Int32 = 0
        _ = curl_multi_perform(raw, &running)
        return Int(running)
    }

    /// The next finished transfer, if any.
    func nextFinished() -> (handle: UnsafeMutableRawPointer, result: CURLcode)? {
        var easy: UnsafeMutableRawPointer?
        var result = CURLE_OK
        guard braid_multi_next_done(raw, &easy, &result) == 1, let easy else { return nil }
        return (easy, result)
    }

    /// Wakes `poll` from any thread (`curl_multi_wakeup` is documented thread-safe): for handles known only by their
    /// address, which is all other threads keep of one.
    static func wake(address: UInt) {
        if let multi = UnsafeMutableRawPointer(bitPattern: address) { _ = curl_multi_wakeup(multi) }
    }
}

/// The multi handle is driven by one thread; the only call made on it from others is `curl_multi_wakeup`
/// (documented thread-safe), on the raw address, while the handle is known to exist.
@available(*, unavailable)
extension MultiHandle: Sendable {}
