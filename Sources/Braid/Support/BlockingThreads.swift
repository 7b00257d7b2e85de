/// Plain threads for blocking work that runs to its end (a download's job, a listing of a bucket), kept a few
/// seconds once idle for the next: a list of a thousand small files runs a thousand jobs, and making and tearing
/// down a thread for each cost more than one of the files' requests. Swift's concurrency threads must never block,
/// so such work never runs there.
///
/// The threads are the process's, not an owner's: an idle one ends by itself after `idleSeconds`.
package final class BlockingThreads: @unchecked Sendable {
    // @unchecked: `work` and `idle` are read and written only with `lock` held.
    static let shared = BlockingThreads()

    /// How long an idle thread waits for more work before it ends.
    static let idleSeconds = 5.0
    /// The stack each thread gets, as `WorkerThread`'s.
    private static let stackSize = 1 << 20

    private let lock = ConditionLock()
    /// Work handed over, not yet taken by an idle thread.
    private var work: [@Sendable () -> Void] = []
    /// Threads waiting for work.
    private var idle = 0

    /// Runs `body` on an idle thread, or on a new one when none is idle.
    func run(_ body: @escaping @Sendable () -> Void) {
        lock.lock()
        if idle > work.count {
            work.append(body)
            lock.signal()
            lock.unlock()
            return
        }
        lock.unlock()
        spawn(body)
    }

    private func spawn(_ body: @escaping @Sendable () -> Void) {
        _ = WorkerThread.create(stackSize: Self.stackSize, detached: true) { [self] in serve(first: body) }
    }

    /// A thread's life: its first work, then whatever is handed over while it waits, until none comes in time.
    private func serve(first: @escaping @Sendable () -> Void) {
        var next: (@Sendable () -> Void)? = first
        while let body = next {
            body()
            next = take()
        }
    }

    private func take() -> (@Sendable () -> Void)? {
        lock.lock()
        defer { lock.unlock() }
        idle += 1
        defer { idle -= 1 }
        let deadline = ContinuousClock.now + .seconds(Self.idleSeconds)
        while work.isEmpty {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return nil }
            lock.wait(seconds: Double(left.components.seconds) + Double(left.components.attoseconds) * 1e-18)
        }
        return work.removeFirst()
    }
}
