import CCurl

extension EasyHandle {
    /// Points the handle at `url` and applies the options every Braid request shares: HTTP(S) only, HTTP/1.1 (so
    /// each segment is its own TCP connection), TLS trust, timeouts and stall detection, then the user's
    /// credentials that `url`'s origin may carry (`setCredentials`) and `headers`, the request's own.
    ///
    /// libcurl follows no redirect itself (`CURLOPT_FOLLOWLOCATION` off, so `CURLOPT_UNRESTRICTED_AUTH` never
    /// applies): the probe follows them hop by hop (see `Prober`), configuring each hop here, and range requests go
    /// straight to where the probe ended.
    func configure(url: String, options: RequestOptions, headers: [String]) {
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        set(CURLOPT_FOLLOWLOCATION, false)
        set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        set(CURLOPT_NOSIGNAL, true)
        set(CURLOPT_USERAGENT, options.userAgent)
        set(CURLOPT_ACCEPT_ENCODING, nil as String?)
        set(CURLOPT_CONNECTTIMEOUT, options.connectTimeoutSeconds)
        set(CURLOPT_LOW_SPEED_LIMIT, options.lowSpeedBytesPerSecond)
        set(CURLOPT_LOW_SPEED_TIME, options.stallTimeoutSeconds)
        set(CURLOPT_BUFFERSIZE, options.receiveBufferSize)
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
}
