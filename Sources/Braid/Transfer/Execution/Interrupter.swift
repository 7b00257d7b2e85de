import CCurl
import Synchronization

/// Why a running download was asked to stop.
public enum StopReason: Sendable, Equatable {
    /// SIGINT or SIGTERM: save progress and exit.
    case interrupted
    /// Paused through the API: save progress and wait for `resume()`.
    case paused
    /// Cancelled through the API, keeping or removing the partial file.
    case cancelled(removingPartialFile: Bool)
}

/// Lets other threads pause, resume, interrupt or cancel a running download, and wakes its libcurl poll at once.
final class Interrupter: Sendable {
    private struct State: ~Copyable {
        var reason: StopReason?
        /// The multi handle being polled, as an address: only `curl_multi_wakeup`, which libcurl documents as
        /// callable from any thread, is ever called on it from here, and only while it is registered.
        var multi: UInt?
    }

    private let state = Mutex(State())
    /// Signalled whenever `reason` changes, for a paused download waiting to go on.
    private let changed = ConditionLock()

    init() {}

    var reason: StopReason? { state.withLock { $0.reason } }

    /// Whether the download must end (not merely pause).
    var isEnding: Bool {
        switch reason {
        case .interrupted, .cancelled: true
        case .paused, nil: false
        }
    }

    /// Records why to stop; an interruption or cancellation overrides a pause, never the other way round.
    func stop(_ reason: StopReason) {
        state.withLock { state in
            switch (state.reason, reason) {
            case (nil, _), (.paused, .interrupted), (.paused, .cancelled): state.reason = reason
            default: break
            }
            if let address = state.multi { MultiHandle.wake(address: address) }
        }
        changed.withLock { changed.broadcast() }
    }

    /// Wakes the poll of the transfer under way, if one is, so that it looks at once at what changed: a stream's
    /// reader that moved on or failed.
    func wake() {
        state.withLock { state in
            if let address = state.multi, let multi = UnsafeMutableRawPointer(bitPattern: address) {
                _ = curl_multi_wakeup(multi)
            }
        }
    }

    /// Lifts a pause.
    func resume() {
        state.withLock { state in
            if state.reason == .paused { state.reason = nil }
        }
        changed.withLock { changed.broadcast() }
    }

    /// Blocks while paused; returns the reason to end, or nil to go on.
    func waitWhilePaused() -> StopReason? {
        changed.lock()
        defer { changed.unlock() }
        while true {
            switch reason {
            case .paused: changed.wait()
            case nil: return nil
            case let other: return other
            }
        }
    }

    /// Wakes the multi handle at `multiAddress` (a pool's) on every stop, until `unregister()`.
    func register(multiAddress: UInt) {
        state.withLock { $0.multi = multiAddress }
    }

    func unregister() {
        state.withLock { $0.multi = nil }
    }
}
