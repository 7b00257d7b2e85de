import NIOCore
import NIOPosix

extension DaemonServer {
    /// Where the server is in its life, guarded by an actor so `start()` and `stop()` may come from any task.
    actor Lifecycle {
        /// What a running server owns and a stop must end.
        struct Running: Sendable {
            /// Accepts connections and serves them; cancelling it closes every connection.
            let serving: Task<Void, Never>
            /// The server's one event-loop thread.
            let group: MultiThreadedEventLoopGroup
        }

        private enum State {
            /// Made, not started. → `starting` (start), → `stopped` (stop).
            case idle
            /// `start()` is binding. → `running` (bound), → `stopped` (the bind failed, or `stop()` came first).
            case starting
            /// Serving. → `stopping` (stop).
            case running(Running)
            /// A stop is closing connections; later `stop()` calls wait for the same one. → `stopped`.
            case stopping(Task<Void, Never>)
            /// Done; neither start nor stop has anything left to do.
            case stopped
        }

        private var state = State.idle

        /// Claims the right to start; throws if the server was started (or stopped) before.
        func beginStart() throws(DaemonServerError) {
            guard case .idle = state else { throw .alreadyStarted() }
            state = .starting
        }

        /// Records a bind that failed: the server cannot be started again.
        func failStart() {
            state = .stopped
        }

        /// Records a bound, serving server; false if `stop()` came while it was binding, and the caller must undo
        /// the start.
        func finishStart(_ running: Running) -> Bool {
            guard case .starting = state else { return false }
            state = .running(running)
            return true
        }

        /// Ends a running server (cancels its serving task, waits for every connection to close, shuts its thread
        /// down) or waits for the stop already under way; returns at once otherwise.
        func stop() async {
            switch state {
            case .idle, .starting:
                state = .stopped
            case .running(let running):
                let stopping = Task {
                    running.serving.cancel()
                    await running.serving.value
                    try? await running.group.shutdownGracefully()
                }
                state = .stopping(stopping)
                await stopping.value
                state = .stopped
            case .stopping(let stopping):
                await stopping.value
            case .stopped:
                break
            }
        }
    }
}
