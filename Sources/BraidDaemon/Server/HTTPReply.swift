import NIOCore
import NIOHTTP1

/// One HTTP response as a value: status, headers and body, with a factory for each answer the server gives.
///
/// The connection turns a reply into response parts; nothing here touches a socket.
struct HTTPReply: Equatable {
    var status: HTTPResponseStatus
    var headers: HTTPHeaders
    var body: [UInt8]
    /// Whether the connection is closed once this reply is written (413 and 400 leave the stream in an unknown
    /// state; a client that did not ask for keep-alive gets the same).
    var closesConnection: Bool

    init(status: HTTPResponseStatus, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], closes: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.closesConnection = closes
    }

    /// The policy the page is served under: nothing loads from anywhere, the page's own inline script and style run,
    /// and it may only talk back to the daemon (`'self'` plus `ws:`/`wss:`, since older Chromium did not let `'self'`
    /// match a WebSocket URL).
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; "
        + "connect-src 'self' ws: wss:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The page at `/`: never cached, so an upgraded daemon serves its new page at once.
    static func page(_ html: [UInt8]) -> Self {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/html; charset=utf-8")
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "Content-Security-Policy", value: contentSecurityPolicy)
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "Referrer-Policy", value: "no-referrer")
        return Self(status: .ok, headers: headers, body: html)
    }

    /// The endpoint's answer to a JSON-RPC request: 200 with the JSON, or 204 when there is nothing to say.
    /// `callback` wraps the JSON as aria2's GET form does for JSONP (`callback(…)`, as JavaScript).
    static func rpc(_ response: [UInt8]?, callback: String? = nil) -> Self {
        var headers = rpcHeaders()
        guard let response else { return Self(status: .noContent, headers: headers) }
        if let callback {
            headers.add(name: "Content-Type", value: "text/javascript")
            return Self(
                status: .ok, headers: headers,
                body: Array(callback.utf8) + [UInt8(ascii: "(")] + response + [UInt8(ascii: ")")])
        }
        headers.add(name: "Content-Type", value: "application/json-rpc")
        return Self(status: .ok, headers: headers, body: response)
    }

    /// A GET-form request whose query could not be turned into JSON-RPC: 400 with a JSON-RPC error, as aria2 answers.
    static func rpcError(code: Int, message: String) -> Self {
        var headers = rpcHeaders()
        headers.add(name: "Content-Type", value: "application/json-rpc")
        let body = #"{"jsonrpc":"2.0","id":null,"error":{"code":\#(code),"message":"\#(message)"}}"#
        return Self(status: .badRequest, headers: headers, body: Array(body.utf8))
    }

    /// The answer to a CORS preflight, with aria2's headers, so pages served elsewhere (AriaNg) may call.
    static func preflight() -> Self {
        var headers = rpcHeaders()
        headers.add(name: "Access-Control-Allow-Methods", value: "POST, GET, OPTIONS")
        headers.add(name: "Access-Control-Allow-Headers", value: "Content-Type")
        headers.add(name: "Access-Control-Max-Age", value: "1728000")
        return Self(status: .ok, headers: headers)
    }

    /// A body over the limit; the connection closes because the rest of the body is not read.
    static func payloadTooLarge(limit: Int) -> Self {
        text(.payloadTooLarge, "request body larger than \(limit) bytes\n", closes: true)
    }

    /// A request that could not be served as sent (a broken WebSocket handshake); the connection closes.
    static func badRequest() -> Self { text(.badRequest, "bad request\n", closes: true) }

    /// A request to `/jsonrpc` the origin policy refuses: from another site's page, or by a name that is not
    /// loopback, while the daemon has no secret.
    static func forbiddenOrigin() -> Self {
        text(
            .forbidden,
            "forbidden: without --rpc-secret, only this daemon's own page and programs on this machine may call it\n"
        )
    }

    /// A path the server does not have.
    static func notFound() -> Self { text(.notFound, "not found\n") }

    /// A known path asked with the wrong method; `allow` lists the right ones.
    static func methodNotAllowed(allow: String) -> Self {
        var reply = text(.methodNotAllowed, "method not allowed\n")
        reply.headers.add(name: "Allow", value: allow)
        return reply
    }

    /// Headers every `/jsonrpc` response carries: any origin may read it, as with aria2.
    private static func rpcHeaders() -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "Access-Control-Allow-Origin", value: "*")
        headers.add(name: "Cache-Control", value: "no-cache")
        return headers
    }

    private static func text(_ status: HTTPResponseStatus, _ message: String, closes: Bool = false) -> Self {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        return Self(status: status, headers: headers, body: Array(message.utf8), closes: closes)
    }

    /// The response parts for a request of `version`, with `Content-Length` (except on 204) and, when the
    /// connection is to close, `Connection: close`.
    func parts(version: HTTPVersion, keepAlive: Bool) -> [HTTPServerResponsePart] {
        var headers = headers
        if status != .noContent {
            headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
        }
        if closesConnection || !keepAlive {
            headers.replaceOrAdd(name: "Connection", value: "close")
        } else if version.major == 1, version.minor == 0 {
            headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        }
        let head = HTTPResponseHead(version: version, status: status, headers: headers)
        guard !body.isEmpty else { return [.head(head), .end(nil)] }
        return [.head(head), .body(.byteBuffer(ByteBuffer(bytes: body))), .end(nil)]
    }
}
