import Synchronization

/// The buffer between a download's thread and the one consumer of its events.
///
/// Nothing the download reports is lost or reordered, however slow the consumer, with one exception that keeps
/// memory bounded: a progress snapshot that has not been read yet is replaced by the next one, so a consumer
/// that falls behind sees the latest progress, never a backlog of stale ones. Every other event (states,
/// notices, retries, the start and the result) is kept, in the order it was reported.
final class EventQueue: Sendable {
    private struct State: ~Copyable {
        var pending: [DownloadEvent] = []
        /// Where the next event is read from `pending`; the array is compacted as it empties.
        var head = 0
        var waiter: CheckedContinuation<DownloadEvent?, Never>?
        var finished = false
    }

    private let state = Mutex(State())

    /// The events as a stream for one consumer; it ends once `finish()` was called and everything was read.
    var stream: AsyncStream<DownloadEvent> {
        AsyncStream(unfolding: { [self] in await next() })
    }

    func push(_ event: DownloadEvent) {
        let waiter = state.withLock { state -> CheckedContinuation<DownloadEvent?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            if case .progress = event, state.pending.count > state.head, case .progress = state.pending.last {
                state.pending[state.pending.count - 1] = event
            } else {
                state.pending.append(event)
            }
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// No more events come; the consumer reads what is queued, then the stream ends.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<DownloadEvent?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    private func next() async -> DownloadEvent? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<DownloadEvent?, Never>) in
                let ready = state.withLock { state -> DownloadEvent?? in
                    if state.head < state.pending.count {
                        let event = state.pending[state.head]
                        state.head += 1
                        if state.head == state.pending.count {
                            state.pending.removeAll(keepingCapacity: true)
                            state.head = 0
                        }
                        return .some(event)
                    }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.waiter = waiter
                    return .none
                }
                if let ready { waiter.resume(returning: ready) }
            }
        } onCancel: {
            // A consumer that stops listening ends its stream; the download goes on.
            let waiter = state.withLock { state -> CheckedContinuation<DownloadEvent?, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}
