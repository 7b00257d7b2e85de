/// Which of a `DownloadManager`'s downloads run, and when the next one starts: a pure value. Each event returns the
/// actions for the manager to perform, so every rule is tested without a network (`DownloadQueueTests`).
///
/// Downloads wait in one line, in the order they were submitted; a running download that is paused gives up its
/// slot and goes first in line. With `.fixed(n)` the first `n` of the line run; with `.automatic` the next one whose
/// host has room under the connection caps starts (see `DownloadManager.Concurrency`, and
/// docs/design/many-downloads.md).
struct DownloadQueue<ID: Hashable & Sendable>: Sendable {
    /// What the owner does after an event.
    enum Action: Sendable, Equatable {
        /// Run the download: it counts against the limits from now on.
        case start(ID)
        /// Let a paused download go on.
        case proceed(ID)
        /// Pause the running download, its progress saved.
        case pause(ID)
        case cancel(ID, removingPartialFile: Bool)
        case interrupt(ID)
        /// End a download that never started, without running it.
        case end(ID, Ending)
        /// A download that never started is held by a pause (`true`), or lined up again (`false`).
        case hold(ID, Bool)
    }

    /// How a download that never started ends.
    enum Ending: Sendable, Equatable {
        case cancelled
        case interrupted
    }

    /// Where a download is:
    /// - `waiting` → `running` when admitted; `waiting` → `held` → `waiting` on pause and resume;
    /// - `running` → `paused` (its slot given up, first in line) → `resuming` on resume → `running` when admitted;
    /// - `resuming` → `paused` on pause;
    /// - it leaves the queue when it finishes, or at once when it is cancelled or interrupted before it started.
    enum Phase: Sendable, Equatable {
        case waiting, held, running, paused, resuming
    }

    private struct Entry {
        let host: String
        /// The connections it asks for before it is probed: its fixed count, or 1 with automatic connections.
        let requested: Int
        var phase: Phase
        /// The connections it plans once probed.
        var planned: Int?
        /// The connections it holds or aims for now, as its last progress said.
        var live = 0
        /// Whether it was told to end: it starts or goes on no more.
        var ending = false
    }

    /// The caps the downloads share.
    struct Caps: Sendable, Equatable {
        var connections: Int
        var perHost: Int
    }

    var concurrency: DownloadManager.Concurrency
    let caps: Caps
    private var entries: [ID: Entry] = [:]
    /// Downloads not running, in line order.
    private var line = Line()
    /// How many of the line's downloads are from each host: a pump sees at once when every host in line is full.
    private var hostsInLine: [String: Int] = [:]
    /// Running downloads, in the order they started.
    private(set) var running: [ID] = []
    /// What the downloads of each host planned, to guess what the next one from there will.
    private var plannedByHost: [String: (sum: Int, count: Int)] = [:]
    /// Whether everything was interrupted: nothing starts any more.
    private(set) var isClosed = false
    /// With `.automatic`, the connections the running downloads count for (`weight(of:)`) as the last pump left
    /// them, kept while only events that change no weight come (a submission, a probe that plans what its download
    /// was counted for), and less a finished download's own; nil once any other event came, which each of them
    /// clears before anything else. A list of ten thousand counted its sixteen running downloads again at each
    /// submission and each end.
    private var load: Load?

    private struct Load {
        var total = 0
        var byHost: [String: Int] = [:]

        /// Whether it counts as `other` does: the same connections in all and for each host.
        func counts(as other: Load) -> Bool {
            total == other.total && byHost.filter { $0.value != 0 } == other.byHost.filter { $0.value != 0 }
        }
    }

    /// The connections the running downloads count for now, in all and by host.
    private func counted() -> Load {
        var load = Load()
        for id in running {
            guard let entry = entries[id] else { continue }
            let weight = weight(of: entry)
            load.total += weight
            load.byHost[entry.host, default: 0] += weight
        }
        return load
    }

    init(concurrency: DownloadManager.Concurrency, caps: Caps) {
        self.concurrency = concurrency
        self.caps = Caps(connections: max(1, caps.connections), perHost: max(1, caps.perHost))
    }

    // MARK: Reading

    func phase(of id: ID) -> Phase? { entries[id]?.phase }

    /// Whether the download is in the queue: waiting, running or paused.
    func contains(_ id: ID) -> Bool { entries[id] != nil }

    var isEmpty: Bool { entries.isEmpty }

    /// The downloads not running, in line order.
    var waiting: [ID] { line.ids }

    // MARK: Events

    /// A new download, last in line; a `held` one waits for `resume`. After `interruptAll` it ends at once.
    mutating func submit(_ id: ID, host: String, requestedConnections: Int, held: Bool = false) -> [Action] {
        guard entries[id] == nil else { return [] }
        guard !isClosed else { return [.end(id, .interrupted)] }
        entries[id] = Entry(host: host, requested: max(1, requestedConnections), phase: held ? .held : .waiting)
        lineUp(id)
        return (held ? [.hold(id, true)] : []) + pump(reusingLoad: true)
    }

    /// A waiting download is held; a running one is paused and goes first in line, its slot given to the next.
    mutating func pause(_ id: ID) -> [Action] {
        load = nil
        guard var entry = entries[id], !entry.ending else { return [] }
        switch entry.phase {
        case .waiting:
            entry.phase = .held
            entries[id] = entry
            return [.hold(id, true)]
        case .running:
            entry.phase = .paused
            entries[id] = entry
            running.removeAll { $0 == id }
            lineUp(id, first: true)
            return [.pause(id)] + pump()
        case .resuming:
            // Not let go on yet: the download itself is still paused.
            entry.phase = .paused
            entries[id] = entry
            return []
        case .held, .paused:
            return []
        }
    }

    /// A held download waits again; a paused one goes on when admitted.
    mutating func resume(_ id: ID) -> [Action] {
        load = nil
        guard var entry = entries[id], !entry.ending else { return [] }
        switch entry.phase {
        case .held:
            entry.phase = .waiting
            entries[id] = entry
            return [.hold(id, false)] + pump()
        case .paused:
            entry.phase = .resuming
            entries[id] = entry
            return pump()
        case .waiting, .running, .resuming:
            return []
        }
    }

    /// Puts the waiting, held and paused downloads of `ids` in that order, in the places they hold in line; the
    /// rest of the line keeps its places, and running downloads are left as they are. Nothing starts: whether one
    /// may does not depend on the order, and none could before (each event's pump starts all that may).
    mutating func order(_ ids: [ID]) {
        line.order(ids)
    }

    /// A download that never started ends at once; a started one is cancelled and leaves when it finishes (a running
    /// one keeps its slot until then).
    mutating func cancel(_ id: ID, removingPartialFile: Bool = false) -> [Action] {
        load = nil
        guard var entry = entries[id] else { return [] }
        switch entry.phase {
        case .waiting, .held:
            leaveLine(id)
            entries[id] = nil
            return [.end(id, .cancelled)]
        case .running, .paused, .resuming:
            leaveLine(id)
            entry.ending = true
            entries[id] = entry
            return [.cancel(id, removingPartialFile: removingPartialFile)]
        }
    }

    /// Every started download is interrupted (its progress saved) and every other one ends at once, in line order;
    /// nothing starts from now on.
    mutating func interruptAll() -> [Action] {
        load = nil
        isClosed = true
        var actions: [Action] = running.filter { entries[$0]?.ending == false }.map { .interrupt($0) }
        for id in line {
            guard var entry = entries[id] else { continue }
            switch entry.phase {
            case .waiting, .held:
                entries[id] = nil
                actions.append(.end(id, .interrupted))
            case .paused, .resuming, .running:
                guard !entry.ending else { continue }
                entry.ending = true
                entries[id] = entry
                actions.append(.interrupt(id))
            }
        }
        for id in running { entries[id]?.ending = true }
        line.removeAll()
        hostsInLine.removeAll()
        return actions
    }

    /// The download's run returned: it leaves the queue, and its slot goes to the next.
    mutating func finished(_ id: ID) -> [Action] {
        guard let entry = entries[id] else {
            load = nil
            return []
        }
        // What a running one counted for leaves with it; the others' weights stay as they were.
        if entry.phase == .running, load != nil {
            let weight = weight(of: entry)
            load?.total -= weight
            load?.byHost[entry.host, default: weight] -= weight
        } else {
            load = nil
        }
        // A running download is not in line: no need to look for it there among a long list's thousands.
        if entry.phase != .running { leaveLine(id) }
        entries[id] = nil
        running.removeAll { $0 == id }
        return pump(reusingLoad: true)
    }

    /// The download was probed and plans `connections`.
    mutating func probed(_ id: ID, connections: Int) -> [Action] {
        guard var entry = entries[id] else { return [] }
        let connections = max(1, connections)
        let before = (weight(of: entry), guess(for: entry.host))
        if entry.planned == nil {
            plannedByHost[entry.host, default: (0, 0)].sum += connections
            plannedByHost[entry.host, default: (0, 0)].count += 1
        }
        entry.planned = connections
        entries[id] = entry
        // Nothing that admits a download changed when its weight and its host's guess for the others are as they
        // were (a list's small files, each planning the one connection it was counted for): the last pump and its
        // `load` stand.
        guard (weight(of: entry), guess(for: entry.host)) != before else { return [] }
        return pump()
    }

    /// The download holds or aims for `connections` now (with automatic connections, they change as it runs).
    mutating func connections(_ id: ID, _ connections: Int) -> [Action] {
        load = nil
        guard var entry = entries[id], entry.live != connections else { return [] }
        entry.live = connections
        entries[id] = entry
        return pump()
    }

    /// How many may run at once. More start at once when it grows; none is stopped when it shrinks.
    mutating func setConcurrency(_ concurrency: DownloadManager.Concurrency) -> [Action] {
        load = nil
        self.concurrency = concurrency
        return pump()
    }

    // MARK: The line

    private mutating func lineUp(_ id: ID, first: Bool = false) {
        guard let entry = entries[id] else { return }
        if first { line.insertFirst(id) } else { line.append(id) }
        hostsInLine[entry.host, default: 0] += 1
    }

    /// Takes the download out of the line, if it is there.
    private mutating func leaveLine(_ id: ID) {
        guard let entry = entries[id], let index = line.firstIndex(of: id) else { return }
        line.remove(at: index)
        hostsInLine[entry.host, default: 1] -= 1
        if hostsInLine[entry.host] == 0 { hostsInLine[entry.host] = nil }
    }

    // MARK: Admission

    /// The connections a running download counts for: what it plans or holds, or before its probe what the earlier
    /// downloads from its host planned on average (what it asks for when none has been probed), within the host cap.
    private func weight(of entry: Entry) -> Int {
        let guess = entry.planned ?? guess(for: entry.host) ?? entry.requested
        return min(caps.perHost, max(1, guess, entry.live))
    }

    /// The connections a download to `host` not probed yet is counted for: the mean of those its host's probed
    /// downloads planned, rounded; nil before any was probed.
    private func guess(for host: String) -> Int? {
        guard let earlier = plannedByHost[host], earlier.count > 0 else { return nil }
        return (2 * earlier.sum + earlier.count) / (2 * earlier.count)
    }

    /// Starts what the concurrency admits, in line order: with `.fixed` strictly so; with `.automatic` a download
    /// whose host is full lets the next one from another host go first.
    ///
    /// - Parameter reusingLoad: whether `load`, when there is one, still counts the running downloads: only a
    ///   submission and a finish say so; any other event counts them again.
    private mutating func pump(reusingLoad: Bool = false) -> [Action] {
        let kept = load
        load = nil
        guard !isClosed else { return [] }
        var actions: [Action] = []
        var load = Load()
        if case .automatic = concurrency {
            if reusingLoad, let kept {
                assert(kept.counts(as: counted()), "Invalid state: a kept load that no longer counts what runs")
                load = kept
            } else {
                load = counted()
            }
        }
        // Kept for the next submission's or finish's pump, however this one ends.
        defer { if case .automatic = concurrency { self.load = load } }
        /// Whether every host with a download in line is full: nothing more can start from the line.
        func everyHostFull() -> Bool {
            guard case .automatic = concurrency else { return false }
            return hostsInLine.keys.allSatisfy { load.byHost[$0, default: 0] >= caps.perHost }
        }
        var index = 0
        while index < line.count, !everyHostFull() {
            let id = line[index]
            guard var entry = entries[id], entry.phase == .waiting || entry.phase == .resuming, !entry.ending else {
                index += 1
                continue
            }
            switch concurrency {
            case let .fixed(limit):
                guard running.count < max(1, limit) else { return actions }
            case .automatic:
                guard running.count < DownloadManager.Concurrency.automaticCeiling, load.total < caps.connections
                else {
                    return actions
                }
                guard load.byHost[entry.host, default: 0] < caps.perHost else {
                    index += 1
                    continue
                }
            }
            let action: Action = entry.phase == .waiting ? .start(id) : .proceed(id)
            entry.phase = .running
            entries[id] = entry
            line.remove(at: index)
            hostsInLine[entry.host, default: 1] -= 1
            if hostsInLine[entry.host] == 0 { hostsInLine[entry.host] = nil }
            running.append(id)
            let weight = weight(of: entry)
            load.total += weight
            load.byHost[entry.host, default: 0] += weight
            actions.append(action)
        }
        return actions
    }
}
