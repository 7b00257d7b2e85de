import Synchronization

/// The request bodies the server holds at once, in bytes. A request whose body would pass the budget waits, its body
/// unread (NIO stops reading the socket), until earlier ones have been answered; the wait is first come, first
/// served. So a crowd of clients each sending the largest body costs the budget, not the crowd times the body limit.
/// Bodies of at most `freeBytes`, every ordinary aria2 call among them, never wait and are not counted.
final class BodyBudget: Sendable {
    /// Bodies this small pass without counting: a connection's few of them cost less than its buffers.
    static let freeBytes = 64 << 10

    private struct Waiter {
        let id: Int
        let bytes: Int
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var available: Int
        var waiters: [Waiter] = []
        var nextID = 0
    }

    let total: Int
    private let state: Mutex<State>

    init(total: Int) {
        self.total = max(total, 1)
        state = Mutex(State(available: self.total))
    }

    /// Takes `bytes` (at most the whole budget) from the budget, waiting for them if need be; returns what was taken,
    /// for `release`. Throws `CancellationError` when the task is cancelled while it waits.
    func acquire(_ bytes: Int) async throws -> Int {
        let bytes = min(bytes, total)
        guard bytes > Self.freeBytes else { return 0 }
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let granted = state.withLock { state -> Bool in
                    if state.waiters.isEmpty, state.available >= bytes {
                        state.available -= bytes
                        return true
                    }
                    state.waiters.append(Waiter(id: id, bytes: bytes, continuation: continuation))
                    return false
                }
                if granted { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
        return bytes
    }

    /// Gives back what `acquire` took, and lets the waiters it now covers go, in order.
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        let ready = state.withLock { state -> [Waiter] in
            state.available += bytes
            var ready: [Waiter] = []
            while let first = state.waiters.first, first.bytes <= state.available {
                state.available -= first.bytes
                ready.append(state.waiters.removeFirst())
            }
            return ready
        }
        for waiter in ready { waiter.continuation.resume() }
    }
}
