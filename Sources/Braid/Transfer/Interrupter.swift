import CCurl
import Synchronization

/// Why a running download was asked to stop.
public enum StopReason: Sendable, Equatable {
    /// SIGINT or SIGTERM: save progress and exit.
    case interrupted
    /// Paused through the API: save progress, keep the partial file.
    case paused
    /// Cancelled through the API.
    case cancelled
}

/// Lets another thread stop a running engine and wake its libcurl poll at once.
final class Interrupter: Sendable {
    private struct State: ~Copyable {
        var reason: StopReason?
        /// The multi handle being polled, as an address: only `curl_multi_wakeup`, which libcurl documents as
        /// callable from any thread, is ever called on it from here, and only while it is registered.
        var multi: UInt?
    }

    private let state = Mutex(State())

    init() {}

    var reason: StopReason? { state.withLock { $0.reason } }

    func stop(_ reason: StopReason) {
        state.withLock { state in
            if state.reason == nil { state.reason = reason }
            if let address = state.multi, let multi = UnsafeMutableRawPointer(bitPattern: address) {
                _ = curl_multi_wakeup(multi)
            }
        }
    }

    /// Clears a pause so the download can run again.
    func reset() {
        state.withLock { $0.reason = nil }
    }

    func register(_ multi: MultiHandle) {
        let address = UInt(bitPattern: multi.raw)
        state.withLock { $0.multi = address }
    }

    func unregister() {
        state.withLock { $0.multi = nil }
    }
}
