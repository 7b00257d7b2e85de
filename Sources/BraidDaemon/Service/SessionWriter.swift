import Braid
import Synchronization

/// Writes the session at most once an `interval`, however many changes come: the first change after a write
/// schedules the next, which writes the table as it is by then. Writing the whole file, synced, on every change cost
/// 10 ms an `addUri` on a fresh daemon and 40 ms with 3,000 results listed, so a `system.multicall` of 1,000 adds
/// took 9 to 42 s and wrote gigabytes; coalesced, the same adds cost one write.
///
/// What a SIGKILL (or a power cut) can lose is the record of the last `interval`'s changes, never a file's data:
/// a download added then is not listed after the restart, one removed then is listed again, and one that finished
/// then is listed as it was (resumed from its manifest, or, when its file was finished, found complete by its
/// chosen path when that was saved, else refused as an existing file). A stop (`close()`) and aria2's
/// `saveSession` write at once.
///
/// Every write runs on one of Braid's blocking threads (`BlockingThreads.value`), never on one of Swift's few
/// concurrency threads, which the daemon's RPC calls run on: a write and its flush take tens of milliseconds with
/// thousands of results listed, and on a machine with two cores a blocked concurrency thread is half of them.
final class SessionWriter: Sendable {
    private struct State {
        /// The write that waits for its time; nil when none is scheduled.
        var scheduled: Task<Void, Never>?
        var closed = false
    }

    let store: SessionStore
    /// The longest a change waits to be written.
    let interval: Duration
    private let state = Mutex(State())

    init(store: SessionStore, interval: Duration) {
        self.store = store
        self.interval = interval
    }

    /// Something the session lists changed: written within `interval`.
    ///
    /// - Parameters:
    ///   - tasks: the table as it is now, read when the write begins.
    ///   - failed: told when that write fails.
    func changed(
        _ tasks: @escaping @Sendable () -> [DaemonTask],
        failed: @escaping @Sendable (BraidError) -> Void
    ) {
        state.withLock { state in
            guard state.scheduled == nil, !state.closed else { return }
            state.scheduled = Task.detached { [self] in
                try? await Task.sleep(for: interval)
                // Changes from now on schedule the next write; those made meanwhile are in this one.
                let due = self.state.withLock { state in
                    state.scheduled = nil
                    return !state.closed
                }
                guard due else { return }
                do throws(BraidError) {
                    try await save(tasks)
                } catch {
                    failed(error)
                }
            }
        }
    }

    /// Writes now (aria2's `saveSession`); a write scheduled before still happens, and writes the same or newer.
    func write(_ tasks: @escaping @Sendable () -> [DaemonTask]) async throws(BraidError) {
        try await save(tasks)
    }

    /// Writes now, for the last time: no scheduled write comes after this one.
    func close(_ tasks: @escaping @Sendable () -> [DaemonTask]) async throws(BraidError) {
        let scheduled = state.withLock { state in
            state.closed = true
            return state.scheduled
        }
        scheduled?.cancel()
        await scheduled?.value
        try await save(tasks)
    }

    private func save(_ tasks: @escaping @Sendable () -> [DaemonTask]) async throws(BraidError) {
        try await BlockingThreads.value { [store] _ throws(BraidError) in try store.save(tasks) }
    }
}
