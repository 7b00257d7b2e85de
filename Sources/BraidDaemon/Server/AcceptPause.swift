import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps the listening socket from spinning when an accept fails for want of descriptors or memory.
///
/// After a failed accept NIO leaves the socket registered for reading (the read it asked for is still pending), so
/// while the backlog holds a connection the event loop wakes at once, calls accept, fails again: 100 % of a core,
/// and the `AcceptBackoffHandler` that `ServerBootstrap` installs only delays the *next* read, which never comes.
/// This handler, on the server channel ahead of NIO's, answers EMFILE and ENFILE by closing the connection that has
/// waited longest (its descriptor takes the next one), and when none waits, or for ENOBUFS and ENOMEM, turns
/// `autoRead` off, which takes the socket out of the poll set, and back on after `delay`. ECONNABORTED (a client
/// gone before it was accepted) needs nothing. Other errors go on to NIO's handler.
final class AcceptPause: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel
    typealias OutboundIn = any Channel

    private let delay: TimeAmount
    private let makeRoom: @Sendable () -> Bool
    private var resumption: Scheduled<Void>?

    /// - Parameter makeRoom: closes a waiting connection to free a descriptor; false when there is none.
    init(delay: TimeAmount, makeRoom: @escaping @Sendable () -> Bool) {
        self.delay = delay
        self.makeRoom = makeRoom
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? IOError else {
            context.fireErrorCaught(error)
            return
        }
        switch error.errnoCode {
        case ECONNABORTED:
            return
        case EMFILE, ENFILE:
            if !makeRoom() { pause(context) }
        case ENOBUFS, ENOMEM:
            pause(context)
        default:
            context.fireErrorCaught(error)
        }
    }

    /// Holds back reads asked for while paused (NIO's async channel asks when it wants more connections).
    func read(context: ChannelHandlerContext) {
        guard resumption == nil else { return }
        context.read()
    }

    func channelInactive(context: ChannelHandlerContext) {
        resumption?.cancel()
        resumption = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        resumption?.cancel()
        resumption = nil
    }

    private func pause(_ context: ChannelHandlerContext) {
        guard resumption == nil, let options = context.channel.syncOptions else { return }
        try? options.setOption(.autoRead, value: false)
        resumption = context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
            self.resumption = nil
            // Setting it back asks the channel to read, which puts the socket back in the poll set.
            try? options.setOption(.autoRead, value: true)
        }
    }
}

@available(*, unavailable)
extension AcceptPause: Sendable {}
