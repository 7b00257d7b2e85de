import CCurl

extension EasyHandle {
    /// Applies the options every Braid request shares: HTTP(S) only, HTTP/1.1 (so each segment is its own TCP
    /// connection), TLS trust, timeouts and stall detection.
    ///
    /// libcurl follows no redirect itself: the probe follows them hop by hop (see `Prober`), deciding at each hop
    /// which of the user's headers that origin may see, and range requests go straight to where the probe ended.
    func configure(url: String, options: RequestOptions, headers: [String]) {
        set(CURLOPT_URL, url)
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
        // libcurl matches a .netrc entry to the host of each request (a redirect to another host gets that host's
        // entry or none), and the cookie engine sends a cookie only to the domain and path it names.
        set(
            CURLOPT_NETRC,
            options.netrcPath == nil ? Int(CURL_NETRC_IGNORED.rawValue) : Int(CURL_NETRC_OPTIONAL.rawValue))
        set(CURLOPT_NETRC_FILE, options.netrcPath)
        set(CURLOPT_COOKIEFILE, options.cookieFilePath)
        if let caCertificatePath = options.caCertificatePath {
            set(CURLOPT_CAINFO, caCertificatePath)
            set(CURLOPT_PROXY_CAINFO, caCertificatePath)
        }
        set(CURLOPT_SSL_VERIFYPEER, !options.insecure)
        set(CURLOPT_SSL_VERIFYHOST, options.insecure ? 0 : 2)
        set(CURLOPT_PROXY_SSL_VERIFYPEER, !options.insecure)
        set(CURLOPT_PROXY_SSL_VERIFYHOST, options.insecure ? 0 : 2)
        setHeaders(headers)
    }
}
