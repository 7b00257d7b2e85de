/// What the daemon's HTTP and WebSocket server serves at `/jsonrpc`: JSON-RPC 2.0 requests in, responses and
/// notifications out. The server knows nothing of aria2's methods or of downloads; the service behind this
/// protocol knows nothing of sockets.
public protocol RPCEndpoint: Sendable {
    /// The response to one JSON-RPC request or batch. Malformed input is answered with a JSON-RPC error, never by
    /// throwing.
    func respond(to body: [UInt8]) async -> RPCResponse

    /// The notifications (`aria2.onDownloadStart` and so on) for one WebSocket client, each a UTF-8 JSON text,
    /// from now until the daemon stops. The stream ends when the daemon stops, or when the client has fallen too far
    /// behind to be sent them all, and the server then closes the socket; it stops reading it (and drops it) when the
    /// client goes.
    func notifications() -> AsyncStream<[UInt8]>

    /// Whether the endpoint has a secret: then a WebSocket is sent notifications only once it has shown it (see
    /// `NotificationGate`).
    var requiresSecret: Bool { get }

    /// Whether `token` is the secret (compared in constant time); false when there is none.
    func isSecret(_ token: String) -> Bool
}

/// An endpoint's answer to one request.
public struct RPCResponse: Sendable, Equatable {
    /// The response as UTF-8 JSON text; nil when there is nothing to send back (a request of notifications only).
    public var body: [UInt8]?
    /// Whether a call of the request carried the endpoint's secret (always false without one).
    public var showedSecret: Bool

    public init(body: [UInt8]?, showedSecret: Bool = false) {
        self.body = body
        self.showedSecret = showedSecret
    }
}
