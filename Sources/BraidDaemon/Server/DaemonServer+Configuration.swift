extension DaemonServer {
    /// Where the server listens, how much it accepts, and the page it serves at `/`.
    public struct Configuration: Sendable {
        /// The address to listen on, as a string: `127.0.0.1`, `::1`, `0.0.0.0`, `localhost`.
        public var host: String
        /// The port to listen on; 0 lets the system pick a free one, which `start()` returns.
        public var port: Int
        /// The largest JSON-RPC request accepted, in bytes: an HTTP body, or a WebSocket message after its fragments
        /// are joined. Larger HTTP bodies are answered with 413 and the connection closed; larger WebSocket messages
        /// close the socket with 1009 (message too big). Values above 1 GiB count as 1 GiB.
        public var maximumBodyBytes: Int
        /// The HTML document served at `/` and `/index.html`.
        public var page: [UInt8]
        /// Whether `/jsonrpc` answers requests from web pages of other origins. Only with a secret (then every
        /// method needs the token): without one, any site the user visits could drive the daemon. See
        /// `OriginPolicy`.
        public var admitsOtherOrigins: Bool
        /// Connections held at once. At the cap a new connection takes the place of the one that has waited longest
        /// without being served (see `ConnectionLimiter`); when every one is being served, it is closed.
        public var maximumConnections: Int
        /// How long a connection may go without sending a request part while nothing is being answered: a new
        /// connection's first request, a keep-alive connection's next one, a request head or body stalled midway.
        public var requestTimeout: Duration
        /// How long a connection may go with nothing moving either way: a client that stops reading an answer. A
        /// WebSocket that sends nothing for half of it is pinged, and closed if the pong does not come within the
        /// other half.
        public var idleTimeout: Duration
        /// The request bodies held at once, all connections together, in bytes: a request whose body would pass it
        /// waits, unread, for others to be answered (see `BodyBudget`). Bodies of 64 KiB or less never wait. At
        /// least `maximumBodyBytes`; 8 MiB by default, four of the largest bodies, which also bounds how many
        /// large requests are parsed at once, whatever the number of cores.
        public var maximumBodyBytesHeld: Int

        /// - Parameters:
        ///   - maximumBodyBytes: 2 MiB by default, room for `aria2.addTorrent` with a large base64 torrent.
        ///   - maximumConnections: 512 by default; keep it well under the process's descriptor limit, which the
        ///     downloads share.
        public init(
            host: String = "127.0.0.1",
            port: Int = 6800,
            maximumBodyBytes: Int = 2 * 1024 * 1024,
            page: [UInt8] = [],
            admitsOtherOrigins: Bool = false,
            maximumConnections: Int = 512,
            requestTimeout: Duration = .seconds(10),
            idleTimeout: Duration = .seconds(60),
            maximumBodyBytesHeld: Int = 8 << 20
        ) {
            self.host = host
            self.port = port
            self.maximumBodyBytes = maximumBodyBytes
            self.page = page
            self.admitsOtherOrigins = admitsOtherOrigins
            self.maximumConnections = maximumConnections
            self.requestTimeout = requestTimeout
            self.idleTimeout = idleTimeout
            self.maximumBodyBytesHeld = maximumBodyBytesHeld
        }
    }
}

extension DaemonServer.Configuration {
    /// Whether `host` is reachable from this machine only: a 127.x.y.z address, `::1` or `localhost`, by the same
    /// rule the origin policy applies to a request's `Host`.
    public var listensOnLoopbackOnly: Bool {
        OriginPolicy.isLoopback(host: host.contains(":") ? "[\(host)]" : host)
    }
}
