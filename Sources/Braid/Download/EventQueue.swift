import Synchronization

/// An event an `EventQueue` may coalesce: a snapshot (progress) that a newer snapshot from the same source replaces
/// while neither has been read.
protocol CoalescingEvent: Sendable {
    associatedtype Source: Hashable & Sendable
    /// Whose event it is: the events of one source keep their order among themselves.
    var source: Source { get }
    /// Whether it only reports how things stand now, so that a newer one makes it worthless.
    var isSnapshot: Bool { get }
}

/// The buffer between the threads that report events and the one consumer of them.
///
/// Nothing reported is lost or reordered, however slow the consumer, with one exception that keeps memory bounded:
/// a snapshot that has not been read yet, and is the latest unread event of its source, is replaced by that
/// source's next snapshot, so a consumer that falls behind sees the latest progress, never a backlog of stale ones.
/// Every other event (states, notices, retries, the start and the result) is kept, in the order it was reported.
///
/// A consumer is woken at most once per `wakeInterval` while events keep coming: one woken by an event, that then
/// finds nothing more, sleeps out the rest of the interval and reads what came meanwhile in one go. A list of a
/// thousand small files reports about ten thousand events a second; waking the consumer's thread for each cost more
/// CPU than receiving the files.
final class EventQueue<Event: CoalescingEvent>: Sendable {
    /// The least time between two wakings of a consumer by a reported event: a status line needs no more.
    static var wakeInterval: Duration { .milliseconds(10) }

    fileprivate struct State: ~Copyable {
        var pending: [Event] = []
        /// Where the next event is read from `pending`; the array is compacted as it empties.
        var head = 0
        /// Where each source's latest event is in `pending` (stale below `head`).
        var latest: [Event.Source: Int] = [:]
        var waiter: CheckedContinuation<Event?, Never>?
        /// When a reported event last woke the consumer, until it next finds the queue empty.
        var woken: ContinuousClock.Instant?
        var finished = false
    }

    private let state = ThreadLock(State())

    /// The events as a stream for one consumer; it ends once `finish()` was called and everything was read.
    var stream: AsyncStream<Event> {
        AsyncStream(unfolding: { [self] in await next() })
    }

    func push(_ event: Event) {
        let waiter = state.withLock { state -> CheckedContinuation<Event?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                state.woken = .now
                return waiter
            }
            let source = event.source
            if event.isSnapshot, let index = state.latest[source], index >= state.head,
                state.pending[index].isSnapshot
            {
                state.pending[index] = event
            } else {
                state.pending.append(event)
                state.latest[source] = state.pending.count - 1
            }
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// No more events come; the consumer reads what is queued, then the stream ends.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Event?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    private func next() async -> Event? {
        // An event already queued is read without suspending: after a waking, the consumer reads a backlog. Else,
        // once woken by an event, it sleeps out the rest of the interval: both decided under one lock.
        let first = state.withLock { state -> (ready: Event??, pause: Duration?) in
            if let ready = state.take() { return (ready, nil) }
            // Nothing taken: the queue is empty and not finished.
            guard let woken = state.woken else { return (nil, nil) }
            state.woken = nil
            let left = Self.wakeInterval - (ContinuousClock.now - woken)
            return (nil, left > .zero ? left : nil)
        }
        if case let .some(ready) = first.ready { return ready }
        if let pause = first.pause { try? await Task.sleep(for: pause) }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Event?, Never>) in
                let ready = state.withLock { state -> Event?? in
                    if let ready = state.take() { return ready }
                    if Task.isCancelled { return .some(nil) }
                    state.waiter = waiter
                    return .none
                }
                if let ready { waiter.resume(returning: ready) }
            }
        } onCancel: {
            // A consumer that stops listening ends its stream; the work that reports goes on.
            let waiter = state.withLock { state -> CheckedContinuation<Event?, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}

extension EventQueue.State {
    /// The next event, `.some(nil)` when the queue is finished and read to its end, nil when the consumer must wait.
    fileprivate mutating func take() -> Event?? {
        guard head < pending.count else { return finished ? .some(nil) : nil }
        let event = pending[head]
        head += 1
        if head == pending.count {
            pending.removeAll(keepingCapacity: true)
            latest.removeAll(keepingCapacity: true)
            head = 0
        }
        return .some(event)
    }
}

extension DownloadEvent: CoalescingEvent {
    /// One download's events are one source.
    var source: Int { 0 }

    var isSnapshot: Bool {
        if case .progress = self { return true }
        return false
    }
}
