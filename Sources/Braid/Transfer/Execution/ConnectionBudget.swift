import Synchronization

/// Connections shared by several downloads: a cap on all of them together and one per host, so that two
/// downloads from one server do not open 16 + 16 connections against it.
///
/// The caps are strict. Within them, a download holding its fair share of a host's cap gets no more while
/// another download of that host is waiting, so none starves.
final class ConnectionBudget: Sendable {
    private struct Holder {
        var host: String
        /// Whether its connections are its own beside a shared one (`register(host:besideSharedConnection:)`).
        var besideShared: Bool
        var count = 0
        /// Whether its last request for a connection was refused.
        var waiting = false
    }

    private struct State {
        var total = 0
        var perHost: [String: Int] = [:]
        /// What the holders beside a shared connection hold, in all and per host.
        var besideTotal = 0
        var besidePerHost: [String: Int] = [:]
        var holders: [Int: Holder] = [:]
        var nextID = 0

        /// Gives back `count` of the connections `holder` holds.
        mutating func give(_ count: Int, of holder: Holder) {
            total -= count
            perHost[holder.host, default: 0] -= count
            guard holder.besideShared else { return }
            besideTotal -= count
            besidePerHost[holder.host, default: 0] -= count
        }
    }

    let maximumConnections: Int
    let maximumPerHost: Int
    private let state = Mutex(State())

    init(maximumConnections: Int, maximumPerHost: Int) {
        self.maximumConnections = max(1, maximumConnections)
        self.maximumPerHost = max(1, maximumPerHost)
    }

    /// Joins the budget for connections to `host`; the returned ticket is passed back on every call.
    ///
    /// - Parameter besideSharedConnection: the holder's requests each take a connection of their own, on another
    ///   multi handle than the requests that share connections (a lane's pool for spread segments, `PoolLanes`):
    ///   such holders together hold at most one fewer than the caps, which leaves room for the shared connection
    ///   those others keep open to the host, so that the connections open stay within the caps. The budget counts
    ///   requests, and a shared connection carries many as one.
    func register(host: String, besideSharedConnection: Bool = false) -> Int {
        state.withLock { state in
            defer { state.nextID += 1 }
            state.holders[state.nextID] = Holder(host: host, besideShared: besideSharedConnection)
            return state.nextID
        }
    }

    /// Leaves the budget, giving back whatever the ticket still holds.
    func unregister(_ ticket: Int) {
        state.withLock { state in
            guard let holder = state.holders.removeValue(forKey: ticket) else { return }
            state.give(holder.count, of: holder)
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
            let besideRoom =
                !holder.besideShared
                || (state.besideTotal < maximumConnections - 1
                    && state.besidePerHost[holder.host, default: 0] < maximumPerHost - 1)
            guard state.total < maximumConnections, onHost < maximumPerHost, besideRoom,
                holder.count < share || !someoneStarved
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
            if holder.besideShared {
                state.besideTotal += 1
                state.besidePerHost[holder.host, default: 0] += 1
            }
            return true
        }
    }

    func release(_ ticket: Int) {
        state.withLock { state in
            guard var holder = state.holders[ticket], holder.count > 0 else { return }
            holder.count -= 1
            state.holders[ticket] = holder
            state.give(1, of: holder)
        }
    }

    /// Connections in use now, for tests and progress displays.
    var inUse: Int { state.withLock { $0.total } }
}
