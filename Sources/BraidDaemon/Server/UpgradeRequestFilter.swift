import NIOCore
import NIOHTTP1

/// Lets NIO's upgrade handler see an `Upgrade` header only on a WebSocket handshake the server will accept, and
/// otherwise strips the header so the request is served as plain HTTP.
///
/// NIO's typed upgrade handler (2.101) drops the request when an upgrade is asked for and no upgrader takes it
/// (`GET /` with `Upgrade: websocket`, a handshake without `Sec-WebSocket-Key`, `Upgrade: h2c`): the connection
/// then waits forever for a request it will never see. Deciding up front avoids that. Only the first request can
/// upgrade, so the filter removes itself after the first head and never sees WebSocket frames. A handshake the
/// origin policy refuses is not upgraded either: served as plain HTTP, it is answered 403.
final class UpgradeRequestFilter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    let policy: OriginPolicy

    init(policy: OriginPolicy) {
        self.policy = policy
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = Self.unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        if head.headers.contains(name: "upgrade"), !Self.isAcceptableHandshake(head) || !policy.admits(head.headers) {
            head.headers.remove(name: "upgrade")
        }
        context.fireChannelRead(Self.wrapInboundOut(.head(head)))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// Whether `head` is a WebSocket handshake at `/jsonrpc` that NIO's WebSocket upgrader will complete: `GET`,
    /// `Upgrade: websocket`, `Connection` naming `upgrade`, one non-empty `Sec-WebSocket-Key`, version 13.
    static func isAcceptableHandshake(_ head: HTTPRequestHead) -> Bool {
        let tokens = { (name: String) in
            head.headers[canonicalForm: name].map { $0.lowercased() }
        }
        let keys = head.headers["sec-websocket-key"]
        return head.method == .GET
            && HTTPRoute.split(head.uri).path == HTTPRoute.rpcPath
            && tokens("upgrade").contains("websocket")
            && tokens("connection").contains("upgrade")
            && keys.count == 1 && keys.first?.isEmpty == false
            && head.headers["sec-websocket-version"] == ["13"]
    }
}

@available(*, unavailable)
extension UpgradeRequestFilter: Sendable {}
