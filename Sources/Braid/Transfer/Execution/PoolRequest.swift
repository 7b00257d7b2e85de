import CCurl

/// One request run on a `TransferPool` for a thread that waits for it, such as a probe's: its connection comes from
/// the pool's cache and goes back to it, for the transfer's requests (or the next download's) to use.
///
/// The caller configures `easy` (its callbacks included) before `perform`, and reads it after: while the request
/// runs, only the pool's thread touches it.
final class PoolRequest: PoolClient {
    let easy: EasyHandle
    private let isCancelled: @Sendable () -> Bool
    private let done = ConditionLock()
    /// Set on the pool's thread when the request ended; read by the waiting thread under `done`.
    private var result: CURLcode?
    private var pool: TransferPool.Driver?

    init(_ easy: EasyHandle, isCancelled: @escaping @Sendable () -> Bool) {
        self.easy = easy
        self.isCancelled = isCancelled
    }

    /// Runs the request on `pool` and returns its result once it ended; a cancelled one ends with
    /// `CURLE_ABORTED_BY_CALLBACK`.
    func perform(on pool: TransferPool) -> CURLcode {
        easy.clearError()
        done.withLock { result = nil }
        pool.attach(self)
        done.lock()
        defer { done.unlock() }
        while result == nil { done.wait() }
        return result!
    }

    // MARK: On the pool's thread

    private var ended: CURLcode?

    func attached(to pool: TransferPool.Driver) {
        self.pool = pool
        ended = nil
        pool.add(easy, for: self)
    }

    func step(now: Double) -> Double {
        guard ended == nil else { return 0 }
        if isCancelled() {
            pool?.remove(easy)
            ended = CURLE_ABORTED_BY_CALLBACK
            return 0
        }
        // Often enough to notice a cancellation soon.
        return 0.05
    }

    func willPerform() {}

    func finished(_ handle: UnsafeMutableRawPointer, result: CURLcode) {
        pool?.remove(easy)
        ended = result
    }

    func didPerform() {}

    var isFinished: Bool { ended != nil }

    func detached() {
        let ended = ended
        pool = nil
        done.withLock {
            result = ended
            done.broadcast()
        }
    }

    var yieldsToVerifier: Bool { false }
}

@available(*, unavailable)
extension PoolRequest: Sendable {}
