import Synchronization

/// Connections shared by several downloads: a cap on all of them together and one per host, so that two
/// downloads from one server do not open 16 + 16 connections against it.
///
/// A download that holds no connection is always granted one, so none of them starves.
final class ConnectionBudget: Sendable {
    private struct State {
        var total = 0
        var perHost: [String: Int] = [:]
    }

    let maximumConnections: Int
    let maximumPerHost: Int
    private let state = Mutex(State())

    init(maximumConnections: Int, maximumPerHost: Int) {
        self.maximumConnections = max(1, maximumConnections)
        self.maximumPerHost = max(1, maximumPerHost)
    }

    /// Takes one connection to `host` if the caps allow, or if the caller holds none yet.
    func acquire(host: String, holding: Int) -> Bool {
        state.withLock { state in
            let onHost = state.perHost[host, default: 0]
            guard holding == 0 || (state.total < maximumConnections && onHost < maximumPerHost) else { return false }
            state.total += 1
            state.perHost[host] = onHost + 1
            return true
        }
    }

    func release(host: String) {
        state.withLock { state in
            state.total -= 1
            state.perHost[host, default: 1] -= 1
        }
    }

    /// Connections in use now, for tests and progress displays.
    var inUse: (total: Int, perHost: [String: Int]) {
        state.withLock { ($0.total, $0.perHost) }
    }
}
