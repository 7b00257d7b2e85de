import Synchronization

/// A lane's pool for the segments of files that spread them over HTTP/1.1 connections of their own
/// (`DownloadJob.spreadsSegments`), and the one place that decides which of two ways a lane spreads: those
/// segments here, beside the lane's shared connection, or every request of the lane on a connection of its own
/// there (`StreamsPerConnection`). Both at once would open more connections than the lane's caps, which each way
/// holds alone.
///
/// The pool is made as the first spread download takes it, and kept for the next ones (its connections and TLS
/// sessions reused) until the lane gives its requests a connection each: then it is shut down, which closes its
/// idle connections, since they would count against the caps beside the lane's.
final class SegmentPool: Sendable {
    private struct State {
        var pool: TransferPool?
        var users = 0
        /// Whether the lane gives its requests a connection each, or is trying to: no download spreads here then.
        var laneSpreads = false
    }

    let limits: TransferPool.Limits
    private let state = Mutex(State())

    init(limits: TransferPool.Limits) {
        self.limits = limits
    }

    /// The pool for a download's spread segments, to give back once its transfer ended; nil while the lane gives
    /// each of its requests a connection, whose segments then have one each on the lane's pool.
    func take() -> TransferPool? {
        state.withLock { state in
            guard !state.laneSpreads else { return nil }
            state.users += 1
            if let pool = state.pool { return pool }
            let pool = TransferPool(limits: limits)
            state.pool = pool
            return pool
        }
    }

    /// Gives back the pool `take()` gave; it stays, with its connections, for the next download that spreads.
    func give() {
        state.withLock { $0.users -= 1 }
    }

    /// Whether the lane may give its requests `limit` streams a connection (`StreamsPerConnection`): fewer than a
    /// server allows only while no download spreads here, the pool then shut down with its connections (on the
    /// calling thread, never the pool's own); shared again, at any time.
    func laneMayCarry(_ limit: Int) -> Bool {
        let (allowed, idle) = state.withLock { state -> (Bool, TransferPool?) in
            guard limit < StreamsPerConnection.unlimited else {
                state.laneSpreads = false
                return (true, nil)
            }
            guard state.users == 0 else { return (false, nil) }
            state.laneSpreads = true
            defer { state.pool = nil }
            return (true, state.pool)
        }
        idle?.shutdown()
        return allowed
    }
}
