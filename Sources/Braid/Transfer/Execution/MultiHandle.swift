import CCurl

/// libcurl's multi interface: many transfers driven from one thread, each on its own connection.
final class MultiHandle {
    let raw: UnsafeMutableRawPointer

    init(maximumConnections: Int) {
        Curl.ensureInitialised()
        guard let raw = curl_multi_init() else { fatalError("curl_multi_init failed: out of memory") }
        self.raw = raw
        // Keep one idle connection per slot alive between segments; never pipeline or multiplex, so that every
        // segment is its own TCP stream and per-connection server caps add up.
        _ = braid_multi_setopt_long(raw, CURLMOPT_MAXCONNECTS, maximumConnections + 4)
        _ = braid_multi_setopt_long(raw, CURLMOPT_PIPELINING, 0)
    }

    deinit {
        curl_multi_cleanup(raw)
    }

    func add(_ easy: EasyHandle) {
        let code = curl_multi_add_handle(raw, easy.raw)
        precondition(code == CURLM_OK, "curl_multi_add_handle failed: \(code.rawValue)")
    }

    func remove(_ easy: EasyHandle) {
        _ = curl_multi_remove_handle(raw, easy.raw)
    }

    /// Waits until a socket is ready, another thread wakes the handle (`Interrupter` does, with
    /// `curl_multi_wakeup`), or the timeout passes.
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
}

/// The multi handle is driven by one thread; the only call made on it from others is `curl_multi_wakeup`
/// (documented thread-safe), by `Interrupter`, on the raw address it was registered with.
@available(*, unavailable)
extension MultiHandle: Sendable {}
