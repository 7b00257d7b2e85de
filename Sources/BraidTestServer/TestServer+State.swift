extension TestServer {
    /// Everything about a running server that threads share; only touched under ``TestServer``'s lock.
    struct State {
        /// The port asked for; 0 lets the kernel pick.
        var requestedPort: Int
        /// The routes by path.
        var routes: [String: Route]
        /// The listening socket, present from ``TestServer/start()`` until ``TestServer/shutdown()``.
        var listener: Socket?
        /// The port actually bound, once started.
        var port: Int?
        /// Set by ``TestServer/shutdown()``; no connection is adopted after it.
        var isShutDown = false
        /// Connections being served, by descriptor, so that shutdown can wake their threads.
        var connections: [Int32: Socket] = [:]
        /// Requests seen per path, for faults scoped to the first requests.
        var requestCounts: [String: Int] = [:]
        /// Ranges corrupted once that a response of the path has already carried altered.
        var corruptionsServed: [String: Set<Range<UInt64>>] = [:]
        /// Responses being sent, per path and then per client address, for the connection limit.
        var requestsInFlight: [String: [String: Int]] = [:]
        /// When each throttled route's shared rate is next free: the end of the last slice one of its responses
        /// reserved (see ``TestServer/Fault/totalThrottle(bytesPerSecond:)``).
        var routeRateFreeAt: [String: ContinuousClock.Instant] = [:]
        /// Digests already computed, because contents can be gigabytes and clients ask repeatedly.
        var digests: [TestContent: [TestContent.DigestAlgorithm: [UInt8]]] = [:]
        /// One record per finished response, in completion order.
        var log: [RequestRecord] = []
        /// Body bytes handed to the kernel over all responses.
        var totalBodyBytesSent: UInt64 = 0
        /// Connections accepted since start.
        var connectionsAccepted = 0
    }
}
