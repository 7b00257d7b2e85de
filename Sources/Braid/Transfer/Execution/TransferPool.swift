import Logging

/// One libcurl multi handle and the one thread that drives it, shared by every request of its owner's downloads,
/// so that connections, TLS sessions and DNS answers are reused: from a download's probe to its segments, and from
/// one download of a `DownloadManager` to the next. See [the transfer note](../../../../docs/design/transfer.md#the-pool).
///
/// libcurl reuses a connection only within one multi handle, driven by one thread at a time ("it is not supported to
/// share connections between multiple concurrent threads"), hence one pool thread rather than one per download.
/// Its clients (`PoolClient`) are attached from any thread and then run on the pool's thread alone.
///
/// The thread starts with the first client and ends at `shutdown()`, which the pool's release also calls. A
/// `DownloadManager` owns one or two for all its downloads (`PoolLanes`); a `Download` made on its own owns one for its
/// run.
final class TransferPool: Sendable {
    /// Caps on the pool's connections, idle ones included.
    struct Limits: Sendable, Equatable {
        /// Connections to one host (`CURLMOPT_MAX_HOST_CONNECTIONS`); nil for no cap.
        var maximumConnectionsPerHost: Int?
        /// Connections in all (`CURLMOPT_MAX_TOTAL_CONNECTIONS`); nil for no cap.
        var maximumConnections: Int?
    }

    let limits: Limits
    let driver: Driver

    /// - Parameters:
    ///   - learningStreams: for a manager's lane, the pool learns how many of its requests share an HTTP/2
    ///     connection (`StreamsPerConnection`); asked on the pool's thread before each change of that limit, whether
    ///     the lane may take it (false, for fewer, while the lane's other pool has connections open:
    ///     `SegmentPool.laneMayCarry`). Nil for a pool that does not learn.
    ///   - logger: where a pool that learns tells what it changed (`-v`).
    init(
        limits: Limits = Limits(), learningStreams: (@Sendable (Int) -> Bool)? = nil,
        logger: Logger = Logger(label: "braid", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.limits = limits
        driver = Driver(limits: limits, learningStreams: learningStreams, logger: logger)
    }

    deinit {
        shutdown()
    }

    /// Runs `client` on the pool's thread from now until it is finished; returns at once.
    func attach(_ client: any PoolClient) {
        driver.attach(client)
    }

    /// Ends the thread once no client is attached, and waits for it. Idle connections are closed.
    func shutdown() {
        driver.shutdown()
    }
}
