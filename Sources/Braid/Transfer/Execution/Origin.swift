import CCurl

/// A URL's scheme, host and port (RFC 6454): what the user's credentials are scoped to (`CredentialScope`).
///
/// It is parsed by libcurl's own URL parser, the one that decides where a request goes, so no URL can look like
/// one origin here and reach another on the wire. A URL that cannot be parsed has no origin, and so is sent none
/// of the user's credentials.
struct Origin: Hashable, Sendable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int

    init?(url: String) {
        guard let origin = Self.parsing(url, { handle in Origin(parsed: handle) }) else { return nil }
        self = origin
    }

    /// The origin of a URL libcurl parsed (`parsing`); nil when it has no scheme, host or port.
    init?(parsed handle: OpaquePointer) {
        guard let scheme = Self.part(handle, CURLUPART_SCHEME),
            let host = Self.part(handle, CURLUPART_HOST), !host.isEmpty,
            let port = Self.part(handle, CURLUPART_PORT, flags: UInt32(CURLU_DEFAULT_PORT)).flatMap({ Int($0) })
        else { return nil }
        self.scheme = scheme.lowercased()
        self.host = host.lowercased()
        self.port = port
    }

    var description: String { "\(scheme)://\(host):\(port)" }

    /// Runs `body` on libcurl's parse of `url`; nil when libcurl cannot parse it.
    static func parsing<Value>(_ url: String, _ body: (OpaquePointer) -> Value?) -> Value? {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        // By `withCString`, which lends the string's bytes where a C string argument would copy them.
        guard url.withCString({ curl_url_set(handle, CURLUPART_URL, $0, 0) }) == CURLUE_OK else { return nil }
        return body(handle)
    }

    /// One part of a parsed URL, as written (still percent-encoded); nil when the URL has none.
    static func part(_ handle: OpaquePointer, _ part: CURLUPart, flags: UInt32 = 0) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, part, &value, flags) == CURLUE_OK, let value else { return nil }
        defer { curl_free(value) }
        return String(cString: value)
    }
}
