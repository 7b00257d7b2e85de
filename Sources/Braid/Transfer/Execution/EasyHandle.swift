import CCurl

/// One libcurl easy handle with typed setters. Reused across requests by the same connection slot so that libcurl
/// keeps the TCP (and TLS) connection alive between segments.
final class EasyHandle {
    let raw: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// The receive buffer size set, if any.
    private var receiveBufferSize: Int?
    /// libcurl writes a detailed message here when a transfer fails.
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    init() {
        Curl.ensureInitialised()
        guard let raw = curl_easy_init() else { fatalError("curl_easy_init failed: out of memory") }
        self.raw = raw
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        // Without it libcurl swaps the SIGPIPE handler in and out around every call on the handle, its cleanup
        // too: three system calls each time, hundreds per small file of a list.
        set(CURLOPT_NOSIGNAL, true)
    }

    deinit {
        curl_easy_cleanup(raw)
        if let headerList { curl_slist_free_all(headerList) }
        errorBuffer.deallocate()
    }

    func set(_ option: CURLoption, _ value: Int) {
        check(braid_easy_setopt_long(raw, option, value), option)
    }

    func set(_ option: CURLoption, _ value: Bool) {
        set(option, value ? 1 : 0)
    }

    func set(_ option: CURLoption, int64 value: Int64) {
        check(braid_easy_setopt_int64(raw, option, curl_off_t(value)), option)
    }

    /// libcurl copies string options, so the Swift string need not outlive the call. Passed by `withCString`,
    /// which lends the string's own bytes: a `String` passed as a C string argument is copied to the heap first.
    func set(_ option: CURLoption, _ value: String?) {
        guard let value else { return check(braid_easy_setopt_string(raw, option, nil), option) }
        value.withCString { check(braid_easy_setopt_string(raw, option, $0), option) }
    }

    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) {
        check(braid_easy_setopt_ptr(raw, option, value), option)
    }

    func set(_ option: CURLoption, callback: braid_curl_data_callback?) {
        check(braid_easy_setopt_data_callback(raw, option, callback), option)
    }

    /// Sets libcurl's receive buffer size (`CURLOPT_BUFFERSIZE`) unless it already is that: libcurl refuses to
    /// change it while the handle holds a buffer, which it may keep after a failed transfer.
    func setReceiveBufferSize(_ size: Int) {
        guard receiveBufferSize != size else { return }
        set(CURLOPT_BUFFERSIZE, size)
        receiveBufferSize = size
    }

    /// Replaces the request's extra header lines; the list lives as long as the handle or the next call.
    func setHeaders(_ lines: [String]) {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            list = line.withCString { curl_slist_append(list, $0) }
        }
        check(braid_easy_setopt_slist(raw, CURLOPT_HTTPHEADER, list), CURLOPT_HTTPHEADER)
        if let headerList { curl_slist_free_all(headerList) }
        headerList = list
    }

    /// The local address and port of the connection the request on the handle at `raw` uses, nil before it has one:
    /// requests that report the same one are streams of one connection.
    static func connectionEndpoint(raw: UnsafeMutableRawPointer) -> String? {
        var port = 0
        var address: UnsafePointer<CChar>?
        guard braid_easy_getinfo_long(raw, CURLINFO_LOCAL_PORT, &port) == CURLE_OK, port > 0,
            braid_easy_getinfo_string(raw, CURLINFO_LOCAL_IP, &address) == CURLE_OK, let address
        else { return nil }
        return "\(String(cString: address)) \(port)"
    }

    /// Body bytes the transfer on the handle at `raw` received so far.
    static func bodyBytesReceived(raw: UnsafeMutableRawPointer) -> Int64 {
        var bytes: curl_off_t = 0
        guard braid_easy_getinfo_off_t(raw, CURLINFO_SIZE_DOWNLOAD_T, &bytes) == CURLE_OK else { return 0 }
        return Int64(max(0, bytes))
    }

    var responseCode: Int {
        var code = 0
        _ = braid_easy_getinfo_long(raw, CURLINFO_RESPONSE_CODE, &code)
        return code
    }

    /// Seconds the current transfer spent before its request could be sent: name lookup, connecting and the TLS
    /// handshake on a new connection, next to nothing on a reused one.
    var setupSeconds: Double {
        var microseconds: curl_off_t = 0
        guard braid_easy_getinfo_off_t(raw, CURLINFO_PRETRANSFER_TIME_T, &microseconds) == CURLE_OK else { return 0 }
        return Double(max(0, microseconds)) / 1e6
    }

    /// Seconds from the current transfer's request being sent to its response's first byte: what the server took
    /// to answer, measured by libcurl, for a response whose request was sent before its attempt began (the probe's).
    var firstByteSeconds: Double {
        var start: curl_off_t = 0
        guard braid_easy_getinfo_off_t(raw, CURLINFO_STARTTRANSFER_TIME_T, &start) == CURLE_OK else { return 0 }
        return max(0, Double(start) / 1e6 - setupSeconds)
    }

    var effectiveURL: String? {
        var pointer: UnsafePointer<CChar>?
        guard braid_easy_getinfo_string(raw, CURLINFO_EFFECTIVE_URL, &pointer) == CURLE_OK, let pointer else {
            return nil
        }
        return String(cString: pointer)
    }

    /// Where the last response redirects to, resolved against the request's URL; nil when it is no redirect.
    var redirectURL: String? {
        var pointer: UnsafePointer<CChar>?
        guard braid_easy_getinfo_string(raw, CURLINFO_REDIRECT_URL, &pointer) == CURLE_OK, let pointer else {
            return nil
        }
        return String(cString: pointer)
    }

    /// The most specific description libcurl has of the last failure.
    func describe(_ code: CURLcode) -> String {
        let detail = String(cString: errorBuffer)
        return detail.isEmpty ? Curl.describe(code) : detail
    }

    func clearError() {
        errorBuffer[0] = 0
    }

    /// Runs the configured request to completion on the calling thread, outside any pool: for an object store's
    /// listing pages, which come before the downloads and share no connection with them.
    func perform() -> CURLcode {
        clearError()
        return curl_easy_perform(raw)
    }

    /// Every value a caller or a server can influence is validated before it gets here (`DownloadOptions.validate`,
    /// the URL checks, `RemoteResource.checkLength`), so a rejected option is a bug in Braid, not bad input.
    private func check(_ code: CURLcode, _ option: CURLoption) {
        precondition(code == CURLE_OK, "libcurl rejected option \(option.rawValue): \(Curl.describe(code))")
    }
}

@available(*, unavailable)
extension EasyHandle: Sendable {}
