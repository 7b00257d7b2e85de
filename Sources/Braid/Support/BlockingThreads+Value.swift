import Synchronization

extension WorkerThread {
    /// Runs `body`, which blocks (on libcurl, say), on a worker thread rather than on one of Swift's few concurrency
    /// threads, and returns what it returns; cancelling the calling task makes `body`'s `isCancelled` true, which
    /// it asks between its blocking steps.
    static func value<Value: Sendable>(
        _ body: @escaping @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) throws(BraidError) -> Value
    ) async throws(BraidError) -> Value {
        let cancelled = CancellationFlag()
        let worker = Mutex<WorkerThread?>(nil)
        let result: Result<Value, BraidError> = await withTaskCancellationHandler {
            await withCheckedContinuation { waiter in
                let thread = WorkerThread {
                    waiter.resume(
                        returning: Result { () throws(BraidError) in
                            try body { cancelled.isSet }
                        })
                }
                worker.withLock { $0 = thread }
                thread.start()
            }
        } onCancel: {
            cancelled.set()
        }
        // The thread's last act was to hand over the result: joining it waits for its return, nothing more.
        worker.withLock { $0?.join() }
        return try result.get()
    }
}

/// Whether the task awaiting a worker thread was cancelled, shared with the thread.
private final class CancellationFlag: Sendable {
    private let flag = Atomic(false)
    var isSet: Bool { flag.load(ordering: .relaxed) }
    func set() { flag.store(true, ordering: .relaxed) }
}
