import CCurl

/// A URL's scheme, host and port (RFC 6454): what the user's headers are scoped to.
///
/// It is parsed by libcurl's own URL parser, the one that decides where a request goes, so no URL can look like
/// one origin here and reach another on the wire. A URL that cannot be parsed has no origin, and so is sent none
/// of the user's headers.
struct Origin: Hashable, Sendable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int

    init?(url: String) {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK,
            let scheme = Self.part(handle, CURLUPART_SCHEME),
            let host = Self.part(handle, CURLUPART_HOST), !host.isEmpty,
            let port = Self.part(handle, CURLUPART_PORT, flags: UInt32(CURLU_DEFAULT_PORT)).flatMap({ Int($0) })
        else { return nil }
        self.scheme = scheme.lowercased()
        self.host = host.lowercased()
        self.port = port
    }

    var description: String { "\(scheme)://\(host):\(port)" }

    private static func part(_ handle: OpaquePointer, _ part: CURLUPart, flags: UInt32 = 0) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, part, &value, flags) == CURLUE_OK, let value else { return nil }
        defer { curl_free(value) }
        return String(cString: value)
    }
}
