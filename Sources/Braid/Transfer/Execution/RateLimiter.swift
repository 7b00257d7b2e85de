import Synchronization

/// A rate limit shared by every connection of a download, and through `parent` by every download of a
/// `DownloadManager`: one token bucket each, so the sum of the connections holds the limit, whatever their number.
///
/// Connections ask before each chunk they receive (`mayReceive`) and pause while the answer is no; the engine
/// resumes them in turn, so none starves. The rate can be changed from any thread while downloads run.
final class RateLimiter: Sendable {
    /// The limiter whose budget this one's bytes also count against.
    let parent: RateLimiter?
    private let bucket: Mutex<TokenBucket>

    /// - Parameter rate: bytes a second; nil or zero for no limit.
    init(rate: Int64?, parent: RateLimiter? = nil) {
        self.parent = parent
        bucket = Mutex(TokenBucket(rate: rate, now: TransferEngine.now()))
    }

    /// This limiter's own rate (not its parent's), in bytes a second; nil for no limit.
    var rate: Int64? {
        get { bucket.withLock { $0.rate } }
        set { bucket.withLock { $0.setRate(newValue, now: TransferEngine.now()) } }
    }

    /// The lowest rate of the chain, the one that binds: nil when nothing limits.
    var effectiveRate: Int64? {
        let own = rate
        guard let inherited = parent?.effectiveRate else { return own }
        return own.map { min($0, inherited) } ?? inherited
    }

    /// Whether a chunk may be received now: true when every limiter of the chain has a token left.
    func mayReceive(now: Double) -> Bool {
        let open = bucket.withLock { bucket in
            bucket.refill(now: now)
            return bucket.isOpen
        }
        return open && (parent?.mayReceive(now: now) ?? true)
    }

    /// Takes a chunk of `count` bytes if every limiter of the chain has a token left, counting it against all of
    /// them; returns whether it did. The connection's check before each chunk: one lock per limiter when it is
    /// admitted without a parent, rather than a pass to ask and another to count.
    func admit(_ count: Int, now: Double) -> Bool {
        if let parent, !parent.mayReceive(now: now) { return false }
        let admitted = bucket.withLock { bucket in
            bucket.refill(now: now)
            guard bucket.isOpen else { return false }
            bucket.take(count, now: now)
            return true
        }
        if admitted { parent?.took(count, now: now) }
        return admitted
    }

    /// Counts `count` received bytes against every limiter of the chain.
    func took(_ count: Int, now: Double) {
        bucket.withLock { $0.take(count, now: now) }
        parent?.took(count, now: now)
    }

    /// Seconds until every limiter of the chain holds `amount` tokens again (0 when they do).
    func secondsUntil(holding amount: Double, now: Double) -> Double {
        let own = bucket.withLock { bucket in
            bucket.refill(now: now)
            return bucket.secondsUntil(holding: amount)
        }
        return max(own, parent?.secondsUntil(holding: amount, now: now) ?? 0)
    }
}
