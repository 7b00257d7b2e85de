import NIOCore
import NIOHTTP1

/// Closes a connection whose bytes are not HTTP, once NIO's protocol-error handler has answered 400.
///
/// Before the first request is decoded no one else is listening for errors (the upgrade negotiation just waits),
/// so without this a client sending garbage would hold its connection, and a stop, open.
final class ParserErrorCloseHandler: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is HTTPParserError {
            context.close(promise: nil)
        }
        context.fireErrorCaught(error)
    }
}

@available(*, unavailable)
extension ParserErrorCloseHandler: Sendable {}
