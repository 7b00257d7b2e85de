/// Whether the requests of a manager's lane share its HTTP/2 connection or take one each, learned by trying rather
/// than assumed.
///
/// Streams on one connection are cheap where the connection is fast, and a trap where something caps each connection
/// (a CDN's per-connection limit, a per-flow shaper, one connection's flow-control window over a long path): a list
/// of files multiplexed on the lane's one connection then gets one connection's rate, where aria2c's sixteen
/// connections get sixteen. Only trying tells the two apart: a rate capped on the whole link stays where it is with
/// more connections, a rate capped on each one grows with them.
///
/// So while the lane keeps at least two requests running, the rate it receives at is measured over a `window`
/// (`measuring`); then each request is given a connection of its own (a limit of one stream a connection, which
/// makes libcurl open a connection for each next request, within the caps: `CURLMOPT_MAX_CONCURRENT_STREAMS`), and
/// the rate is measured again from the first request started after that (`trying`). A rate at least `gain` times
/// the one before keeps a connection a request; anything less puts the streams back on shared connections. Either
/// way it stays so (`settled`), until the lane has had no request for a while (`resume`). A list that ends within a
/// window or two, as one of small files from a near server does, never tries; nor does a lane whose process kept a
/// quarter of the machine's CPUs busy over the window (`isBusy(from:to:)`). Time, counts and CPU times are passed in,
/// so that the decisions are tested without a clock or a network.
///
/// libcurl 7.88 left a stream's body unread now and then once its connection got no new streams, which the pool
/// works around as it turns (`TransferPool.Driver.wakeStragglers`; see
/// [the transfer note](../../../../docs/design/transfer.md#http-versions)).
struct StreamsPerConnection: Equatable, Sendable {
    /// libcurl's own limit, and what a server usually allows: no limit in practice.
    static let unlimited = 100
    /// Seconds of receiving each rate is measured over: more than one, so that a shaper that refills once a second
    /// is measured over more than one refill.
    static let window = 1.5
    /// How much faster the lane must receive with a connection a request to keep them.
    static let gain = 1.25
    /// Seconds with no request after which what was learned is forgotten: the next downloads may come from other
    /// servers, over other paths (a daemon's, or a library's manager given more later).
    static let forgetsAfter = 5.0

    /// CPU time in seconds since some start: the machine's, summed over its CPUs, idle time included
    /// (`/proc/stat`), and the process's own (`CLOCK_PROCESS_CPUTIME_ID`).
    struct CPUTime: Equatable, Sendable {
        var total: Double
        var process: Double
    }

    /// A process that used at least this share of the machine's CPU time over a window is busy with its own work:
    /// its bytes cost CPU at a rate where connections would compete for the CPUs rather than wait on the network (on
    /// loopback, braid used two thirds of two cores, its server the rest). Behind a cap on each connection, a lane's
    /// process uses a few hundredths of them.
    static let ownShare = 0.25

    enum Phase: Equatable, Sendable {
        /// Measuring the rate with shared connections since `since`, when `received` bytes had come and the
        /// machine's CPUs stood at `machine`.
        case measuring(since: Double, received: Int64, machine: CPUTime?)
        /// A connection a request since the lane received at `baseline` bytes a second and had started `started`
        /// requests; measured since `since` (once a request started after the change, so that it may use a
        /// connection of its own), when `received` bytes had come.
        case trying(baseline: Double, started: Int, since: Double?, received: Int64)
        /// Nothing more to try: the limit stays.
        case settled

        var isTrying: Bool {
            if case .trying = self { return true }
            return false
        }
    }

    /// Bytes a second the lane received with its requests sharing connections, and with a connection each, as last
    /// measured: what a log says of a change.
    struct Rates: Equatable, Sendable {
        var shared: Double?
        var separate: Double?
    }

    /// Requests one connection carries at most.
    private(set) var limit = unlimited
    private(set) var phase: Phase
    private(set) var rates = Rates()

    /// Learning from `now`, when the lane had received `received` bytes in all and the machine's CPUs stood at
    /// `machine`.
    init(now: Double, received: Int64 = 0, machine: CPUTime? = nil) {
        phase = .measuring(since: now, received: received, machine: machine)
    }

    /// The lane could not take the limit `observe` asked for at `now` (its other pool's connections are open): it
    /// shares its connections still, and measures again.
    mutating func refused(now: Double, received: Int64, machine: CPUTime?) {
        limit = Self.unlimited
        phase = .measuring(since: now, received: received, machine: machine)
    }

    /// Whether the process used at least `ownShare` of the machine's CPU time between `start` and `end`:
    /// connections cannot help a lane whose bytes wait for a CPU (its server on the same machine, as on loopback, or
    /// a client slower than its network), and a try would only open them. A machine busy with other work is not: a
    /// lane held by a cap on each connection waits on the network whatever else runs. Where either reading is
    /// missing, not busy.
    static func isBusy(from start: CPUTime?, to end: CPUTime?) -> Bool {
        guard let start, let end, end.total > start.total else { return false }
        return (end.process - start.process) / (end.total - start.total) >= ownShare
    }

    /// Whether it still measures: the lane's received bytes need counting only then.
    var isLearning: Bool { phase != .settled }

    /// The lane has requests again at `now`, having received `received` bytes in all, after none since `idleSince`:
    /// after `forgetsAfter`, it learns afresh from shared connections. Returns the new limit when it changes.
    mutating func resume(idleSince: Double, now: Double, received: Int64, machine: @autoclosure () -> CPUTime?)
        -> Int?
    {
        // Asked each time a lane's last request ends and another starts, often in a list of small files: the
        // machine's CPU time, a file read, only once it forgets.
        guard now - idleSince >= Self.forgetsAfter else { return nil }
        let was = limit
        self = StreamsPerConnection(now: now, received: received, machine: machine())
        return was == limit ? nil : limit
    }

    /// What the lane did up to `now`: `received` bytes in all, `running` requests now, `started` requests in all,
    /// with the machine's CPUs at `machine` (nil where that cannot be read). Returns the new limit when it changes.
    mutating func observe(
        now: Double, received: Int64, running: Int, started: Int, machine: @autoclosure () -> CPUTime? = nil
    ) -> Int? {
        switch phase {
        case .settled:
            return nil
        case let .measuring(since, before, machineBefore):
            // A rate measured with fewer than two requests says nothing of how they share a connection; one with
            // nothing received (every request waiting for its headers) gives nothing to compare with. The CPU times
            // (a file read) are read only where a window starts or ends.
            guard running >= 2 else {
                phase = .measuring(since: now, received: received, machine: machine())
                return nil
            }
            guard now - since >= Self.window else { return nil }
            let end = machine()
            guard received > before, !Self.isBusy(from: machineBefore, to: end) else {
                phase = .measuring(since: now, received: received, machine: end)
                return nil
            }
            limit = 1
            let baseline = Double(received - before) / (now - since)
            rates = Rates(shared: baseline)
            phase = .trying(baseline: baseline, started: started, since: nil, received: received)
            return limit
        case let .trying(baseline, startedBefore, since, before):
            guard let since, running >= 2 else {
                // Measured from the first request that could open a connection, and while two or more run.
                let ready = started > startedBefore && running >= 2
                phase = .trying(
                    baseline: baseline, started: startedBefore, since: ready ? now : nil, received: received)
                return nil
            }
            guard now - since >= Self.window else { return nil }
            phase = .settled
            let separate = Double(received - before) / (now - since)
            rates.separate = separate
            guard separate >= baseline * Self.gain else {
                limit = Self.unlimited
                return limit
            }
            return nil
        }
    }
}
