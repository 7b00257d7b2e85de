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
            /// A WebSocket at `/jsonrpc`, with fragmented messages already joined into whole frames.
            case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        }

        /// The connection's channel, kept so a stop can close a connection still waiting for its first request.
        let channel: any Channel
        /// Completes when the first request has been read.
        let negotiated: EventLoopFuture<Negotiated>

        /// Sets up a new connection's pipeline: HTTP/1.1 with pipelining and protocol-error handling (malformed
        /// requests get 400 and a close, here at once), and an upgrader that turns a valid WebSocket handshake at
        /// `/jsonrpc` into a WebSocket whose messages, fragments joined, may be at most `maximumMessageBytes` long.
        static func configure(_ channel: any Channel, maximumMessageBytes: Int, policy: OriginPolicy) throws -> Self {
            let limit = min(max(maximumMessageBytes, 1), RequestBody.ceiling)
            let upgrader = NIOTypedWebSocketServerUpgrader<Negotiated>(
                maxFrameSize: limit,
                enableAutomaticErrorHandling: true,
                shouldUpgrade: { channel, head in
                    // `UpgradeRequestFilter` has let only handshakes at `/jsonrpc` through.
                    let isRPC = HTTPRoute.split(head.uri).path == HTTPRoute.rpcPath
                    return channel.eventLoop.makeSucceededFuture(isRPC ? HTTPHeaders() : nil)
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOWebSocketFrameAggregator(
                                minNonFinalFragmentSize: 1,
                                maxAccumulatedFrameCount: 4096,
                                maxAccumulatedFrameSize: limit
                            )
                        )
                        return .webSocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                    }
                }
            )
            let upgrade = NIOTypedHTTPServerUpgradeConfiguration<Negotiated>(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        .http(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                    }
                }
            )
            let negotiated = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
                configuration: NIOUpgradableHTTPServerPipelineConfiguration(upgradeConfiguration: upgrade)
            )
            let upgradeHandler = try channel.pipeline.syncOperations.handler(
                type: NIOTypedHTTPServerUpgradeHandler<Negotiated>.self
            )
            try channel.pipeline.syncOperations.addHandler(
                UpgradeRequestFilter(policy: policy), position: .before(upgradeHandler))
            try channel.pipeline.syncOperations.addHandler(ParserErrorCloseHandler())
            return Self(channel: channel, negotiated: negotiated)
        }
    }
}
