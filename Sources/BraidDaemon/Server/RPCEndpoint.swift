/// What the daemon's HTTP and WebSocket server serves at `/jsonrpc`: JSON-RPC 2.0 requests in, responses and
/// notifications out. The server knows nothing of aria2's methods or of downloads; the service behind this
/// protocol knows nothing of sockets.
public protocol RPCEndpoint: Sendable {
    /// The response to one JSON-RPC request or batch, as UTF-8 JSON text; nil when there is nothing to send back
    /// (a request that was itself only notifications). Malformed input is answered with a JSON-RPC error, never
    /// by throwing.
    func respond(to body: [UInt8]) async -> [UInt8]?

    /// The notifications (`aria2.onDownloadStart` and so on) for one WebSocket client, each a UTF-8 JSON text,
    /// from now until the daemon stops. The stream ends when the daemon stops; the server stops reading it (and
    /// drops it) when the client goes.
    func notifications() -> AsyncStream<[UInt8]>
}
