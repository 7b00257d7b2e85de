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
        /// How many pauses were asked for, so far: a pause lifted before the transfer looked is still seen.
        var pauses: UInt64 = 0
        /// The multi handle being polled, as an address: only `curl_multi_wakeup`, which libcurl documents as
        /// callable from any thread, is ever called on it from here, and only while it is registered.
        var multi: UInt?
    }

    private let state = Mutex(State())
    /// Signalled whenever `reason` changes, for a paused download waiting to go on.
    private let changed = ConditionLock()

    init() {}

    var reason: StopReason? { state.withLock { $0.reason } }

    /// How many pauses were asked for so far; a transfer notes it when it starts, for `stopReason(pausesBefore:)`.
    var pauses: UInt64 { state.withLock { $0.pauses } }

    /// Why a transfer that began after `pausesBefore` pauses must stop, if it must: the reason standing now, or a
    /// pause asked for since it began, even one already lifted. A pause is an event, not only a state: a `pause()`
    /// and a `resume()` that both come between two looks of a busy transfer still stop it and save its progress,
    /// as the caller was told (a download manager has given its slot away meanwhile), and it then goes on at once.
    func stopReason(pausesBefore: UInt64) -> StopReason? {
        state.withLock { state in state.reason ?? (state.pauses != pausesBefore ? .paused : nil) }
    }

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
            if state.reason == .paused && reason == .paused { state.pauses &+= 1 }
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
