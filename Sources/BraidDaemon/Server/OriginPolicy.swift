import NIOHTTP1

/// Which requests may reach `/jsonrpc` when the daemon has no secret: those from programs (aria2p, curl) and from
/// the daemon's own page, never those a web page from elsewhere makes the user's browser send.
///
/// Without a secret, any site the user visits could otherwise drive the daemon: browsers send a cross-origin
/// `POST` of `text/plain` without asking first, and apply no CORS at all to WebSockets. And a site whose name
/// resolves to 127.0.0.1 (DNS rebinding) would even be same-origin. So, without a secret, a request must name a
/// loopback host in `Host` (what a rebound name does not), and any `Origin` it carries must be the daemon's own.
/// With a secret the token protects every method, and any origin may call (AriaNg is served from elsewhere).
struct OriginPolicy: Sendable, Equatable {
    /// Whether requests from other origins are admitted: true when the daemon has a secret.
    let admitsOtherOrigins: Bool

    func admits(_ headers: HTTPHeaders) -> Bool {
        if admitsOtherOrigins { return true }
        let hosts = headers["host"]
        guard hosts.count <= 1 else { return false }
        guard let host = hosts.first else {
            // HTTP/1.0 without Host: not a browser, which always sends one.
            return headers["origin"].isEmpty
        }
        guard Self.isLoopback(host: host) else { return false }
        let origins = headers["origin"]
        guard !origins.isEmpty else { return true }
        return origins.count == 1 && (origins[0] == "http://" + host || origins[0] == "https://" + host)
    }

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
