import NIOCore
import NIOHTTP1

/// Closes an HTTP connection that is not being served: one that sends no request part for the request timeout while
/// nothing is being answered (a socket that says nothing, a request head or body trickled byte by byte, an idle
/// keep-alive), and one where nothing moves either way for the idle timeout (a client that stops reading an answer).
///
/// Both timeouts are NIO's `IdleStateHandler`s: one behind the HTTP decoder, whose reads are whole request parts, so
/// a head sent a byte at a time counts as no read at all; one at the socket, counting bytes both ways. This handler,
/// behind the first, tells them apart by what it sees pass: from a request's end to its answer's end the connection
/// is being served, and the connection limiter is told so (a served connection is never closed for a newcomer).
final class HTTPExchangeTimeouts: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let limiter: ConnectionLimiter
    /// Requests read whole whose answers have not all been written.
    private var answering = 0

    init(limiter: ConnectionLimiter) {
        self.limiter = limiter
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = Self.unwrapInboundIn(data) {
            answering += 1
            limiter.markServed(context.channel)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = Self.unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        let written = promise ?? context.eventLoop.makePromise()
        let channel = context.channel
        written.futureResult.assumeIsolated().whenComplete { _ in
            self.answering = max(0, self.answering - 1)
            if self.answering == 0 { self.limiter.markWaiting(channel) }
        }
        context.write(data, promise: written)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event as? IdleStateHandler.IdleStateEvent {
        case .read? where answering == 0, .all?:
            context.close(promise: nil)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }
}

@available(*, unavailable)
extension HTTPExchangeTimeouts: Sendable {}
