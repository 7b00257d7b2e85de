import NIOHTTP1

/// Which WebSocket clients are sent notifications from the moment they connect.
///
/// aria2 sends its notifications to every WebSocket. Without a secret Braid does too: the origin policy has already
/// refused the handshakes of other sites' pages. With a secret, a WebSocket is sent notifications once it has shown
/// the secret: as `token=SECRET` in the handshake's query (`ws://host:6800/jsonrpc?token=SECRET`), or by a call of its
/// own that carries it (AriaNg, webui-aria2 and the daemon's page call as soon as they connect). One exception keeps
/// aria2p's listener working, which opens its WebSocket without a token and never calls on it: a program on this
/// machine that is not a browser (a loopback `Host`, no `Origin` but the daemon's own, no `Sec-Fetch-Site`, no
/// browser `User-Agent`) is sent them at once, as aria2 would. A page of any site, and any client elsewhere on the
/// network, must show the secret first.
enum NotificationGate {
    /// Whether the WebSocket opened by `head` is sent notifications from the start.
    static func opensAtHandshake(_ head: HTTPRequestHead, endpoint: any RPCEndpoint) -> Bool {
        guard endpoint.requiresSecret else { return true }
        if let token = Self.token(inQueryOf: head.uri), endpoint.isSecret(token) { return true }
        return OriginPolicy.isProgramOnThisMachine(head.headers)
    }

    /// The `token` value of a request target's query, percent-decoded; nil when there is none.
    static func token(inQueryOf target: String) -> String? {
        let query = HTTPRoute.split(target).query
        for pair in query.split(separator: "&") where pair.hasPrefix("token=") {
            return String(decoding: JSONRPCGetForm.percentDecoded(pair.dropFirst("token=".count)), as: UTF8.self)
        }
        return nil
    }
}
