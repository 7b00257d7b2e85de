import NIOHTTP1

/// Which requests may reach `/jsonrpc` when the daemon has no secret: those from programs (aria2p, curl) and from
/// the daemon's own page, never those a web page from elsewhere makes the user's browser send.
///
/// Without a secret, any site the user visits could otherwise drive the daemon: browsers send a cross-origin
/// `POST` of `text/plain` without asking first, and apply no CORS at all to WebSockets. And a site whose name
/// resolves to 127.0.0.1 (DNS rebinding) would even be same-origin. So, without a secret, a request must name a
/// loopback host in `Host` (what a rebound name does not), and any `Origin` it carries must be the daemon's own.
/// Browsers that send `Sec-Fetch-Site` say so for requests that carry no `Origin` (a `<script>` or `<img>` pointing
/// at aria2's GET form): anything but `same-origin` or `none` (typed by the user) is refused. A request with neither
/// `Origin` nor `Sec-Fetch-Site` from a browser (its `User-Agent` starts with `Mozilla/`, as every browser's does) is
/// refused too: an older browser, or one that leaves fetch metadata out, says nothing of the page that made it send
/// the request. And the GET form's JSONP (`jsoncallback`), which exists to be read by other sites' scripts, needs a
/// secret. With a secret the token protects every method, and any origin may call (AriaNg is served from elsewhere).
struct OriginPolicy: Sendable, Equatable {
    /// Whether requests from other origins are admitted: true when the daemon has a secret.
    let admitsOtherOrigins: Bool

    func admits(_ headers: HTTPHeaders) -> Bool {
        if admitsOtherOrigins { return true }
        let hosts = headers["host"]
        guard hosts.count <= 1 else { return false }
        guard let host = hosts.first else {
            // HTTP/1.0 without Host: not a browser, which always sends one.
            return headers["origin"].isEmpty && headers["sec-fetch-site"].isEmpty && !Self.isBrowser(headers)
        }
        guard Self.isLoopback(host: host) else { return false }
        let fetchSites = headers["sec-fetch-site"].map { $0.lowercased() }
        guard fetchSites.allSatisfy({ $0 == "same-origin" || $0 == "none" }) else { return false }
        let origins = headers["origin"]
        guard !origins.isEmpty else { return !fetchSites.isEmpty || !Self.isBrowser(headers) }
        return origins.count == 1 && (origins[0] == "http://" + host || origins[0] == "https://" + host)
    }

    /// Whether the request names a browser as its sender: every browser's `User-Agent` starts with `Mozilla/`.
    static func isBrowser(_ headers: HTTPHeaders) -> Bool {
        headers["user-agent"].contains { $0.hasPrefix("Mozilla/") }
    }

    /// Whether a request comes from a program on this machine that is not a browser: what the policy admits without
    /// a secret, with no browser `User-Agent` and no fetch metadata (which only browsers send).
    static func isProgramOnThisMachine(_ headers: HTTPHeaders) -> Bool {
        OriginPolicy(admitsOtherOrigins: false).admits(headers) && !isBrowser(headers)
            && headers["sec-fetch-site"].isEmpty && headers["sec-fetch-mode"].isEmpty
    }

    /// Whether aria2's JSONP answers may be given: they are read by another site's script, so only with a secret.
    var admitsJSONP: Bool { admitsOtherOrigins }

    /// Whether a `Host` value (`127.0.0.1:6800`, `localhost:6800`, `[::1]:6800`) names this machine by an address
    /// no DNS answer can change.
    static func isLoopback(host value: String) -> Bool {
        var name = Substring(value.lowercased())
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            let rest = name[name.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber)) else { return false }
            return name[name.index(after: name.startIndex)..<close] == "::1"
        }
        if let colon = name.lastIndex(of: ":") {
            guard name[name.index(after: colon)...].allSatisfy(\.isNumber) else { return false }
            name = name[..<colon]
        }
        if name == "localhost" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
