import NIOCore
import NIOHTTP1
import NIOWebSocket

extension DaemonServer {
    /// An accepted connection, before and after its first request decides whether it stays HTTP or becomes a
    /// WebSocket.
    struct Connection: Sendable {
        /// What the first request made of the connection.
        enum Negotiated: Sendable {
            /// Plain HTTP/1.1: requests and responses, keep-alive and pipelining.
            case http(NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>)
            /// A WebSocket at `/jsonrpc`, with fragmented messages already joined into whole frames;
            /// `notificationsOpen` when it is sent notifications from the start (see `NotificationGate`).
            case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, notificationsOpen: Bool)
        }

        /// What every connection is set up with.
        struct Settings: Sendable {
            /// The largest request body or WebSocket message.
            let maximumMessageBytes: Int
            let policy: OriginPolicy
            let limiter: ConnectionLimiter
            let requestTimeout: TimeAmount
            let idleTimeout: TimeAmount
            /// Asked, at a WebSocket handshake, whether the secret is needed and whether a token is it.
            let endpoint: any RPCEndpoint
        }

        /// The connection's channel, kept so a stop can close a connection still waiting for its first request.
        let channel: any Channel
        /// Completes when the first request has been read.
        let negotiated: EventLoopFuture<Negotiated>

        /// The handlers that serve plain HTTP only, taken out when the connection becomes a WebSocket.
        private static let httpOnlyHandlers = ["braid.socket-idle", "braid.request-idle", "braid.exchange-timeouts"]

        /// Sets up a new connection's pipeline, once the limiter has let it in: HTTP/1.1 with pipelining and
        /// protocol-error handling (malformed requests get 400 and a close, here at once), the request and idle
        /// timeouts, and an upgrader that turns a valid WebSocket handshake at `/jsonrpc` into a WebSocket whose
        /// messages, fragments joined, may be at most `maximumMessageBytes` long, kept alive by pings.
        ///
        /// - Throws: `ChannelError.ioOnClosedChannel` when the limiter refused the connection (it is closed).
        static func configure(_ channel: any Channel, settings: Settings) throws -> Self {
            guard settings.limiter.admit(channel) else {
                channel.close(promise: nil)
                throw ChannelError.ioOnClosedChannel
            }
            let limit = min(max(settings.maximumMessageBytes, 1), RequestBody.ceiling)
            let upgrader = NIOTypedWebSocketServerUpgrader<Negotiated>(
                maxFrameSize: limit,
                enableAutomaticErrorHandling: true,
                shouldUpgrade: { channel, head in
                    // `UpgradeRequestFilter` has let only handshakes at `/jsonrpc` through.
                    let isRPC = HTTPRoute.split(head.uri).path == HTTPRoute.rpcPath
                    return channel.eventLoop.makeSucceededFuture(isRPC ? HTTPHeaders() : nil)
                },
                upgradePipelineHandler: { channel, head in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        for name in httpOnlyHandlers { pipeline.removeHandler(name: name, promise: nil) }
                        try pipeline.addHandler(
                            IdleStateHandler(readTimeout: .nanoseconds(settings.idleTimeout.nanoseconds / 2)))
                        try pipeline.addHandler(WebSocketKeepAlive())
                        try pipeline.addHandler(
                            NIOWebSocketFrameAggregator(
                                minNonFinalFragmentSize: 1,
                                maxAccumulatedFrameCount: 4096,
                                maxAccumulatedFrameSize: limit
                            )
                        )
                        let notificationsOpen = NotificationGate.opensAtHandshake(head, endpoint: settings.endpoint)
                        if notificationsOpen {
                            settings.limiter.markServed(channel)
                        } else {
                            settings.limiter.markWaiting(channel)
                        }
                        return .webSocket(
                            try NIOAsyncChannel(wrappingChannelSynchronously: channel),
                            notificationsOpen: notificationsOpen)
                    }
                }
            )
            let upgrade = NIOTypedHTTPServerUpgradeConfiguration<Negotiated>(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        // Two request parts buffered at most: a request waiting for the body budget holds little.
                        let buffering = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>.Configuration(
                            backPressureStrategy: .init(lowWatermark: 1, highWatermark: 2))
                        return .http(
                            try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: buffering))
                    }
                }
            )
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(
                IdleStateHandler(allTimeout: settings.idleTimeout), name: httpOnlyHandlers[0], position: .first)
            let negotiated = try pipeline.configureUpgradableHTTPServerPipeline(
                configuration: NIOUpgradableHTTPServerPipelineConfiguration(upgradeConfiguration: upgrade)
            )
            let upgradeHandler = try pipeline.handler(type: NIOTypedHTTPServerUpgradeHandler<Negotiated>.self)
            try pipeline.addHandler(
                IdleStateHandler(readTimeout: settings.requestTimeout), name: httpOnlyHandlers[1],
                position: .before(upgradeHandler))
            try pipeline.addHandler(
                HTTPExchangeTimeouts(limiter: settings.limiter), name: httpOnlyHandlers[2],
                position: .before(upgradeHandler))
            try pipeline.addHandler(UpgradeRequestFilter(policy: settings.policy), position: .before(upgradeHandler))
            try pipeline.addHandler(ParserErrorCloseHandler())
            return Self(channel: channel, negotiated: negotiated)
        }
    }
}
