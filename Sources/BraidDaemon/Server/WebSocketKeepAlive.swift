import NIOCore
import NIOWebSocket

/// Closes a WebSocket whose client has gone silent: when NIO's `IdleStateHandler` in front of it reports that nothing
/// was read for a while, the client is sent a ping; if nothing (not even the pong) comes back by the next report, the
/// socket is closed. A listener that only reads notifications, as aria2p's does, answers pings and stays.
final class WebSocketKeepAlive: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private var pingUnanswered = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pingUnanswered = false
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case .read? = event as? IdleStateHandler.IdleStateEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if pingUnanswered {
            context.close(promise: nil)
        } else {
            pingUnanswered = true
            let ping = WebSocketFrame(fin: true, opcode: .ping, data: context.channel.allocator.buffer(capacity: 0))
            context.writeAndFlush(Self.wrapOutboundOut(ping), promise: nil)
        }
    }
}

@available(*, unavailable)
extension WebSocketKeepAlive: Sendable {}
