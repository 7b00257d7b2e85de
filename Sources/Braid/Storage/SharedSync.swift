/// One flush standing for the callers that asked for it while another was under way: each caller needs a flush that
/// starts after it asks, since only such a flush surely holds the change it made. A caller that finds a flush in
/// flight waits for it to end and then for the next, which the first of the waiters starts for all of them (the
/// group commit that databases use for their logs). Sixteen downloads of a list naming their files in one directory
/// so share each directory `fsync`, rather than each making its own.
final class SharedSync: @unchecked Sendable {
    // @unchecked: the counters are touched only with `condition` locked.
    private let condition = ConditionLock()
    /// The flushes started so far; they run one at a time, so one is running while more started than finished.
    private var started = 0
    /// The latest flush finished; every one started before it has finished too.
    private var finished = 0
    /// The callers waiting for a flush to end (for tests, which wait for callers to be waiting).
    private var waiters = 0

    /// Returns once a run of `flush` that started after this call began has ended; runs it on the calling thread
    /// when no other caller is running one.
    func perform(_ flush: () -> Void) {
        condition.lock()
        defer { condition.unlock() }
        let needed = started + 1
        while finished < needed {
            guard started == finished else {
                waiters += 1
                condition.wait()
                waiters -= 1
                continue
            }
            started += 1
            condition.unlock()
            flush()
            condition.lock()
            finished = started
            condition.broadcast()
        }
    }

    /// How many callers wait for a flush to end.
    var waiting: Int {
        condition.withLock { waiters }
    }

    /// How many flushes have ended (for tests, which count what a call flushed).
    var flushes: Int {
        condition.withLock { finished }
    }
}
