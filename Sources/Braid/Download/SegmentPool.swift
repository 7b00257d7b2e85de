import Synchronization

/// A lane's pool for the segments of files that spread them over HTTP/1.1 connections of their own
/// (`DownloadJob.spreadsSegments`), and the one place that decides which of two ways a lane spreads: those
/// segments here, beside the lane's shared connection, or every request of the lane on a connection of its own
/// there (`StreamsPerConnection`). Both at once would open more connections than the lane's caps, which each way
/// holds alone.
///
/// The pool is made as the first spread download takes it and shut down once the last gives it back, which closes
/// its connections: a lane's connections left open here, idle, would count against the caps beside a lane that then
/// gives each of its requests a connection. Sequential large files each make it afresh (a thread and a TLS handshake
/// a connection, next to nothing beside 16 MiB).
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

    /// Gives back a pool `take()` gave; the last one shuts it down, closing its connections. Not on the pool's thread.
    func give(_ pool: TransferPool) {
        let last = state.withLock { state in
            state.users -= 1
            guard state.users == 0 else { return false }
            state.pool = nil
            return true
        }
        if last { pool.shutdown() }
    }

    /// Whether the lane may give its requests `limit` streams a connection (`StreamsPerConnection`): fewer than a
    /// server allows only while no download spreads here; shared again, at any time.
    func laneMayCarry(_ limit: Int) -> Bool {
        state.withLock { state in
            guard limit < StreamsPerConnection.unlimited else {
                state.laneSpreads = false
                return true
            }
            guard state.users == 0 else { return false }
            state.laneSpreads = true
            return true
        }
    }
}
