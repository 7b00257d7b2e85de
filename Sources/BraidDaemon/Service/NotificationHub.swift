import Synchronization

/// Hands each notification to every WebSocket client's stream. A client that reads slowly keeps only its newest
/// 256 notifications, so a stuck client costs bounded memory and never holds up the others.
final class NotificationHub: Sendable {
    private struct State {
        var next = 0
        var subscribers: [Int: AsyncStream<[UInt8]>.Continuation] = [:]
        var finished = false
    }

    private let state = Mutex(State())

    /// A stream of every notification from now on, until `finish()`.
    func subscribe() -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let id: Int? = state.withLock { state in
            guard !state.finished else { return nil }
            defer { state.next += 1 }
            state.subscribers[state.next] = continuation
            return state.next
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    func publish(_ message: [UInt8]) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(message) }
    }

    /// Ends every stream; later subscribers get an ended one.
    func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
