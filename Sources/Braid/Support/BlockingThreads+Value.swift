import Synchronization

extension BlockingThreads {
    /// Runs `body`, which blocks (on libcurl, say), on one of these threads rather than on one of Swift's few
    /// concurrency threads, and returns what it returns; cancelling the calling task makes `body`'s `isCancelled`
    /// true, which it asks between its blocking steps.
    package static func value<Value: Sendable>(
        _ body: @escaping @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) throws(BraidError) -> Value
    ) async throws(BraidError) -> Value {
        let cancelled = CancellationFlag()
        let result: Result<Value, BraidError> = await withTaskCancellationHandler {
            await withCheckedContinuation { waiter in
                BlockingThreads.shared.run {
                    waiter.resume(
                        returning: Result { () throws(BraidError) in
                            try body { cancelled.isSet }
                        })
                }
            }
        } onCancel: {
            cancelled.set()
        }
        return try result.get()
    }
}

/// Whether the task awaiting a worker thread was cancelled, shared with the thread.
private final class CancellationFlag: Sendable {
    private let flag = Atomic(false)
    var isSet: Bool { flag.load(ordering: .relaxed) }
    func set() { flag.store(true, ordering: .relaxed) }
}
