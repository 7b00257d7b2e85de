import Synchronization

/// Hands each notification to every WebSocket client's stream, every one of them, in order.
///
/// A client that reads slowly has its notifications held for it, up to `maximumBytes`; one that falls further behind
/// is cut off (its stream ends, so the server closes its socket) with a log line, rather than sent some and not
/// others: a client that knows it was cut can reconnect and ask for the state again, one that silently missed an
/// `onDownloadComplete` cannot know. Keeping only the newest 256 lost 75 to 206 of the 2,000 notifications of a
/// `system.multicall` of 1,000 adds for a client that was reading all along; those now take about 200 KB.
///
/// All clients together are held to `maximumTotalBytes`: past it, the client holding the most is cut off, as far
/// behind as any, so that a crowd of clients that never read (the server takes 512 connections) cannot make the
/// daemon hold 4 MiB for each.
final class NotificationHub: Sendable {
    /// Bytes held for one client at most, each notification counted with `overhead` for its storage.
    static let maximumBytes = 4 << 20
    /// Bytes held for all clients together at most.
    static let maximumTotalBytes = 64 << 20
    static let overhead = 64

    /// The bytes all clients hold together, shared by the hub and each client's queue.
    private final class Total: Sendable {
        private let bytes = Atomic<Int>(0)

        var value: Int { bytes.load(ordering: .relaxed) }
        func add(_ count: Int) { bytes.add(count, ordering: .relaxed) }
        func subtract(_ count: Int) { bytes.subtract(count, ordering: .relaxed) }
    }

    /// One client's notifications not yet read, and the reader waiting for the next.
    private final class Subscriber: Sendable {
        private struct State {
            var queue: [[UInt8]] = []
            var head = 0
            var bytes = 0
            var waiter: CheckedContinuation<[UInt8]?, Never>?
            var ended = false
        }

        private let state = Mutex(State())
        private let limit: Int
        /// What all of the hub's clients hold, this one's bytes among them.
        private let total: Total

        init(limit: Int, total: Total) {
            self.limit = limit
            self.total = total
        }

        /// The bytes it holds, unread.
        var bytes: Int { state.withLock { $0.bytes } }

        /// Queues `message`; false, ending the stream, when it would hold more than its limit.
        func push(_ message: [UInt8]) -> Bool {
            let (waiter, kept): (CheckedContinuation<[UInt8]?, Never>?, Bool) = state.withLock { state in
                guard !state.ended else { return (nil, true) }
                if let waiter = state.waiter {
                    state.waiter = nil
                    return (waiter, true)
                }
                let size = message.count + NotificationHub.overhead
                guard state.bytes + size <= limit else {
                    state.ended = true
                    drop(&state)
                    return (nil, false)
                }
                state.queue.append(message)
                state.bytes += size
                total.add(size)
                return (nil, true)
            }
            waiter?.resume(returning: message)
            return kept
        }

        /// Ends the stream once what is queued has been read (at once when `dropping`).
        func end(dropping: Bool = false) {
            let waiter = state.withLock { state in
                state.ended = true
                if dropping { drop(&state) }
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }

        private func drop(_ state: inout State) {
            total.subtract(state.bytes)
            state.queue = []
            state.head = 0
            state.bytes = 0
        }

        /// The next notification, waiting for it; nil once the stream has ended.
        func next() async -> [UInt8]? {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<[UInt8]?, Never>) in
                    let next: [UInt8]?? = state.withLock { state in
                        if state.head < state.queue.count {
                            let message = state.queue[state.head]
                            state.queue[state.head] = []
                            state.head += 1
                            state.bytes -= message.count + NotificationHub.overhead
                            total.subtract(message.count + NotificationHub.overhead)
                            // Compacted once half of it has been read: amortised O(1) a notification.
                            if state.head > 64, state.head * 2 >= state.queue.count {
                                state.queue.removeFirst(state.head)
                                state.head = 0
                            }
                            return .some(message)
                        }
                        if state.ended || Task.isCancelled { return .some(nil) }
                        state.waiter = continuation
                        return .none
                    }
                    if let next { continuation.resume(returning: next) }
                }
            } onCancel: {
                end(dropping: true)
            }
        }
    }

    private struct State {
        var next = 0
        var subscribers: [Int: Subscriber] = [:]
        var finished = false
    }

    private let state = Mutex(State())
    /// Told when a client is cut off for falling behind.
    private let cutOff: @Sendable () -> Void
    private let maximumBytes: Int
    private let maximumTotalBytes: Int
    /// What every client holds, together.
    private let total = Total()

    init(
        maximumBytes: Int = NotificationHub.maximumBytes,
        maximumTotalBytes: Int = NotificationHub.maximumTotalBytes,
        cutOff: @escaping @Sendable () -> Void = {}
    ) {
        self.maximumBytes = maximumBytes
        self.maximumTotalBytes = maximumTotalBytes
        self.cutOff = cutOff
    }

    /// The bytes held for all clients, unread.
    var heldBytes: Int { total.value }

    /// A stream of every notification from now on, until `finish()` or until its reader falls `maximumBytes`
    /// behind.
    func subscribe() -> AsyncStream<[UInt8]> {
        let subscriber = Subscriber(limit: maximumBytes, total: total)
        let id: Int? = state.withLock { state in
            guard !state.finished else { return nil }
            defer { state.next += 1 }
            state.subscribers[state.next] = subscriber
            return state.next
        }
        guard let id else { return AsyncStream { $0.finish() } }
        return AsyncStream(
            unfolding: { [weak self] in
                guard let message = await subscriber.next() else {
                    self?.remove(id)
                    return nil
                }
                return message
            },
            onCancel: { [weak self] in
                subscriber.end(dropping: true)
                self?.remove(id)
            }
        )
    }

    private func remove(_ id: Int) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: id) }
    }

    func publish(_ message: [UInt8]) {
        var subscribers = state.withLock { Array($0.subscribers) }
        for (id, subscriber) in subscribers where !subscriber.push(message) {
            remove(id)
            cutOff()
        }
        // Over the overall limit: the clients furthest behind go first, until the rest fit.
        while total.value > maximumTotalBytes {
            guard let furthest = subscribers.indices.max(by: { subscribers[$0].1.bytes < subscribers[$1].1.bytes })
            else { break }
            let (id, subscriber) = subscribers.remove(at: furthest)
            subscriber.end(dropping: true)
            remove(id)
            cutOff()
        }
    }

    /// Ends every stream once its reader has what was published; later subscribers get an ended one.
    func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.end() }
    }
}
