import Synchronization

/// Connections shared by several downloads: a cap on all of them together and one per host, so that two
/// downloads from one server do not open 16 + 16 connections against it.
///
/// The caps are strict. Within them, a download holding its fair share of a host's cap gets no more while
/// another download of that host is waiting, so none starves.
final class ConnectionBudget: Sendable {
    private struct Holder {
        var host: String
        var count = 0
        /// Whether its last request for a connection was refused.
        var waiting = false
    }

    private struct State {
        var total = 0
        var perHost: [String: Int] = [:]
        var holders: [Int: Holder] = [:]
        var nextID = 0
    }

    let maximumConnections: Int
    let maximumPerHost: Int
    private let state = Mutex(State())

    init(maximumConnections: Int, maximumPerHost: Int) {
        self.maximumConnections = max(1, maximumConnections)
        self.maximumPerHost = max(1, maximumPerHost)
    }

    /// Joins the budget for connections to `host`; the returned ticket is passed back on every call.
    func register(host: String) -> Int {
        state.withLock { state in
            defer { state.nextID += 1 }
            state.holders[state.nextID] = Holder(host: host)
            return state.nextID
        }
    }

    /// Leaves the budget, giving back whatever the ticket still holds.
    func unregister(_ ticket: Int) {
        state.withLock { state in
            guard let holder = state.holders.removeValue(forKey: ticket) else { return }
            state.total -= holder.count
            state.perHost[holder.host, default: 0] -= holder.count
        }
    }

    /// Takes one connection if the caps and fairness allow.
    func acquire(_ ticket: Int) -> Bool {
        state.withLock { state in
            guard var holder = state.holders[ticket] else { return false }
            let onHost = state.perHost[holder.host, default: 0]
            let sharers = state.holders.filter { $0.value.host == holder.host }
            let share = max(1, maximumPerHost / max(1, sharers.count))
            let someoneStarved = sharers.contains { $0.key != ticket && $0.value.waiting && $0.value.count < share }
            guard state.total < maximumConnections, onHost < maximumPerHost, holder.count < share || !someoneStarved
            else {
                holder.waiting = true
                state.holders[ticket] = holder
                return false
            }
            holder.count += 1
            holder.waiting = false
            state.holders[ticket] = holder
            state.total += 1
            state.perHost[holder.host] = onHost + 1
            return true
        }
    }

    func release(_ ticket: Int) {
        state.withLock { state in
            guard var holder = state.holders[ticket], holder.count > 0 else { return }
            holder.count -= 1
            state.holders[ticket] = holder
            state.total -= 1
            state.perHost[holder.host, default: 1] -= 1
        }
    }

    /// Connections in use now, for tests and progress displays.
    var inUse: Int { state.withLock { $0.total } }
}
