import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// The daemon's HTTP/1.1 and WebSocket server: the page at `/`, and aria2's JSON-RPC at `/jsonrpc` as POST, as
/// aria2's GET form, and over a WebSocket that also carries notifications.
///
/// It knows nothing of aria2's methods: every request body goes to the `RPCEndpoint` and its answer comes back.
/// One event-loop thread serves everything, and nothing runs while no client talks but the timeouts of open
/// connections. Hostile clients are held to limits: the connection cap (`ConnectionLimiter`), the request and idle
/// timeouts (NIO's `IdleStateHandler`, see `HTTPExchangeTimeouts` and `WebSocketKeepAlive`), a pause instead of a
/// spin when descriptors run out (`AcceptPause`), the bytes of request bodies held at once (`BodyBudget`), and every
/// answer written whole before its connection closes.
///
/// ```swift
/// let server = DaemonServer(configuration: .init(port: 0, page: DaemonPage.html), endpoint: service)
/// let (host, port) = try await server.start()
/// …
/// await server.stop()
/// ```
public final class DaemonServer: Sendable {
    private let configuration: Configuration
    private let endpoint: any RPCEndpoint
    private let logger: Logger
    private let lifecycle = Lifecycle()
    private let limiter: ConnectionLimiter
    private let budget: BodyBudget

    /// How long accepting pauses when the process is out of descriptors and no connection can make room.
    static let acceptPause = TimeAmount.milliseconds(200)

    /// A server that will listen as `configuration` says and hand JSON-RPC requests to `endpoint`; nothing is
    /// opened until `start()`.
    public init(
        configuration: Configuration,
        endpoint: any RPCEndpoint,
        logger: Logger = Logger(label: "braid.daemon.server")
    ) {
        self.configuration = configuration
        self.endpoint = endpoint
        self.logger = logger
        limiter = ConnectionLimiter(maximum: configuration.maximumConnections)
        let largestBody = min(max(configuration.maximumBodyBytes, 1), RequestBody.ceiling)
        budget = BodyBudget(total: max(configuration.maximumBodyBytesHeld, largestBody))
    }

    /// Binds and starts serving; returns the bound address (port 0 picks a free port).
    ///
    /// - Throws: `DaemonServerError` when the address cannot be bound (the port is taken, the host is not this
    ///   machine's), when the server was started before, or when `stop()` came while binding.
    public func start() async throws -> (host: String, port: Int) {
        try await lifecycle.beginStart()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let listener: NIOAsyncChannel<Connection, Never>
        do {
            listener = try await bind(on: group)
        } catch {
            await lifecycle.failStart()
            try? await group.shutdownGracefully()
            throw DaemonServerError.cannotBind(host: configuration.host, port: configuration.port, cause: error)
        }
        let address = listener.channel.localAddress
        let serving = Task { await self.serve(listener) }
        guard await lifecycle.finishStart(Lifecycle.Running(serving: serving, group: group)) else {
            serving.cancel()
            await serving.value
            try? await group.shutdownGracefully()
            throw DaemonServerError.stopped()
        }
        logger.debug("daemon server listening", metadata: ["address": "\(address.map { "\($0)" } ?? "?")"])
        return (address?.ipAddress ?? configuration.host, address?.port ?? configuration.port)
    }

    /// Stops listening, closes every connection (WebSocket clients get a close frame, 1001 going away), ends
    /// notification forwarding and shuts the server's thread down; returns when all of that is done.
    /// Idempotent: a second call waits for the first, and a call on a server never started does nothing.
    public func stop() async {
        await lifecycle.stop()
    }

    private func bind(on group: MultiThreadedEventLoopGroup) async throws -> NIOAsyncChannel<Connection, Never> {
        let settings = Connection.Settings(
            maximumMessageBytes: configuration.maximumBodyBytes,
            policy: OriginPolicy(admitsOtherOrigins: configuration.admitsOtherOrigins),
            limiter: limiter,
            requestTimeout: TimeAmount(configuration.requestTimeout),
            idleTimeout: TimeAmount(configuration.idleTimeout),
            endpoint: endpoint
        )
        let limiter = limiter
        return try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 128)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        AcceptPause(delay: Self.acceptPause, makeRoom: { limiter.closeLongestWaiting() }))
                }
            }
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            // Small reads, one per wake-up: a connection waiting for the body budget holds a few KiB, not 256.
            .childChannelOption(
                .recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 16 << 10)
            )
            .childChannelOption(.maxMessagesPerRead, value: 1)
            .bind(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try Connection.configure(channel, settings: settings)
                }
            }
    }

    /// Accepts connections and serves each in a child task until cancelled; cancelling closes the listener and,
    /// through the task group, every connection.
    private func serve(_ listener: NIOAsyncChannel<Connection, Never>) async {
        await withDiscardingTaskGroup { connections in
            do {
                try await listener.executeThenClose { accepted in
                    for try await connection in accepted {
                        connections.addTask { await self.serve(connection) }
                    }
                }
            } catch {
                logger.debug("daemon server stopped accepting", metadata: ["reason": "\(error)"])
            }
        }
    }

    private func serve(_ connection: Connection) async {
        let negotiated: Connection.Negotiated
        do {
            negotiated = try await withTaskCancellationHandler {
                try await connection.negotiated.get()
            } onCancel: {
                // A client that connected and said nothing would otherwise hold a stop up forever.
                connection.channel.close(promise: nil)
            }
        } catch {
            // A WebSocket handshake NIO refused (no key, unknown version) leaves the request unanswered; malformed
            // HTTP was already answered and closed, and then this write fails harmlessly.
            logger.debug("daemon connection refused", metadata: ["reason": "\(error)"])
            await Self.refuse(connection.channel)
            return
        }
        do {
            switch negotiated {
            case .http(let channel):
                let http = HTTPConnection(
                    endpoint: endpoint,
                    page: configuration.page,
                    maximumBodyBytes: configuration.maximumBodyBytes,
                    policy: OriginPolicy(admitsOtherOrigins: configuration.admitsOtherOrigins),
                    budget: budget
                )
                try await http.serve(channel)
            case .webSocket(let channel, let notificationsOpen):
                let limiter = limiter
                let webSocket = WebSocketConnection(endpoint: endpoint) { limiter.markServed(channel.channel) }
                try await webSocket.serve(channel, notificationsOpen: notificationsOpen)
            }
        } catch {
            logger.debug("daemon connection ended", metadata: ["reason": "\(error)"])
        }
    }

    /// Answers 400 on a connection whose first request could not be served, and closes it once the answer is out.
    private static func refuse(_ channel: any Channel) async {
        try? await HTTPReply.badRequest().send(on: channel, version: .http1_1, keepAlive: false)
        try? await channel.close()
    }
}
