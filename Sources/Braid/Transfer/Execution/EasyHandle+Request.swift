import CCurl

extension EasyHandle {
    /// Points the handle at `url` and applies the options every Braid request shares: HTTP(S) only, TLS trust,
    /// timeouts and stall detection, then the user's credentials that `url`'s origin may carry (`setCredentials`)
    /// and `headers`, the request's own. HTTP/1.1 until `setHTTPVersion` says otherwise.
    ///
    /// libcurl follows no redirect itself (`CURLOPT_FOLLOWLOCATION` off, so `CURLOPT_UNRESTRICTED_AUTH` never
    /// applies): the probe follows them hop by hop (see `Prober`), configuring each hop here, and range requests go
    /// straight to where the probe ended.
    func configure(url: String, options: RequestOptions, headers: [String]) {
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        set(CURLOPT_FOLLOWLOCATION, false)
        setHTTPVersion(for: url, options: options, multiplexes: false, http2Failed: false)
        set(CURLOPT_NOSIGNAL, true)
        set(CURLOPT_USERAGENT, options.userAgent)
        set(CURLOPT_ACCEPT_ENCODING, nil as String?)
        set(CURLOPT_CONNECTTIMEOUT, options.connectTimeoutSeconds)
        set(CURLOPT_LOW_SPEED_LIMIT, options.lowSpeedBytesPerSecond)
        set(CURLOPT_LOW_SPEED_TIME, options.stallTimeoutSeconds)
        setReceiveBufferSize(options.receiveBufferSize)
        set(CURLOPT_TCP_KEEPALIVE, true)
        set(CURLOPT_FAILONERROR, false)
        set(CURLOPT_VERBOSE, options.verbose)
        // Without an explicit proxy (nil), libcurl reads http_proxy, https_proxy, ALL_PROXY and NO_PROXY itself.
        set(CURLOPT_PROXY, options.proxy)
        set(CURLOPT_NOPROXY, options.noProxy)
        if let caCertificatePath = options.caCertificatePath {
            set(CURLOPT_CAINFO, caCertificatePath)
            set(CURLOPT_PROXY_CAINFO, caCertificatePath)
        }
        set(CURLOPT_SSL_VERIFYPEER, !options.insecure)
        set(CURLOPT_SSL_VERIFYHOST, options.insecure ? 0 : 2)
        set(CURLOPT_PROXY_SSL_VERIFYPEER, !options.insecure)
        set(CURLOPT_PROXY_SSL_VERIFYHOST, options.insecure ? 0 : 2)
        setCredentials(for: url, options: options, headers: headers)
    }

    /// Whether `url` is HTTPS, where HTTP/2 is asked for by ALPN (`setHTTPVersion`).
    static func isHTTPS(_ url: String) -> Bool {
        url.prefix(8).lowercased() == "https://"
    }

    /// Chooses the HTTP version of the next request to `url` (see `DownloadOptions.HTTPVersion`): HTTP/2 when the
    /// options force it, or when they leave it to Braid and the request `multiplexes` (it may share a connection:
    /// it does not run alongside other segments of its file) over HTTPS; HTTP/1.1 when the origin failed HTTP/2
    /// before (`http2Failed`), and otherwise.
    func setHTTPVersion(for url: String, options: RequestOptions, multiplexes: Bool, http2Failed: Bool) {
        let secure = Self.isHTTPS(url)
        let version =
            switch options.httpVersion {
            case _ where http2Failed: CURL_HTTP_VERSION_1_1
            case .http1: CURL_HTTP_VERSION_1_1
            case .http2: secure ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
            case .automatic: multiplexes && secure ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1
            }
        set(CURLOPT_HTTP_VERSION, version)
        // libcurl 7.88 fails every stream after the first on a connection of HTTP/2 with prior knowledge (h2c):
        // such a request has a connection of its own.
        let priorKnowledge = version == CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
        set(CURLOPT_FRESH_CONNECT, priorKnowledge)
        set(CURLOPT_FORBID_REUSE, priorKnowledge)
        // An HTTP/2 request waits for a connection being made to the same server rather than opening one more:
        // many small files then share one connection.
        set(CURLOPT_PIPEWAIT, version == CURL_HTTP_VERSION_2TLS)
    }

    /// Whether the last request failed in HTTP/2's framing: a stream reset (`RST_STREAM`) or a broken session.
    static func failedInHTTP2(_ code: CURLcode) -> Bool {
        code == CURLE_HTTP2 || code == CURLE_HTTP2_STREAM
    }
}
