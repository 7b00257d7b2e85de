/// Chooses how many connections a download uses while it runs (`-n auto`), from the throughput it measures and
/// what the server answers: a pure value inside `TransferMachine`, fed samples and events with the time, and tested
/// rule by rule without a network. A step to another count is kept only when it raises the throughput by
/// `minimumGain` (the rule `braid bench` recommends by), the count never passes `ceiling`, and after a refusal it
/// stays at what the server accepted for `refusalCooldown` seconds. Its life is `Phase`.
///
/// How it opens, its pace, its rules and what it remembers: `docs/design/auto-connections.md`.
struct ConnectionPolicy: Equatable, Sendable {
    struct Configuration: Equatable, Sendable {
        /// Connections at the start (after the opening request, when there is one).
        var initial = 4
        /// Whether one request goes first, alone, until its first byte has come, and one connection is then measured
        /// as any count is: what it tells of the server (its time to a first byte, a connection's rate) sizes the
        /// requests that follow, the first count is judged against it (a server whose total is capped, or a busy
        /// CPU, keeps one), and where one request fetches the file in less time than that, it is the only one (as
        /// aria2 starts, one connection first). The opening request fetches at most `openingPiece` bytes.
        var opensAlone = false
        var openingPiece: Int64 = 64 << 20
        /// Whether a starting count that is neither one request alone nor remembered is not yet known to pay: its
        /// first requests are the plan's own (small at the start, so that connections found surplus end soon), and
        /// when its first step up does not pay, half as many are tried at once (a server whose total is capped
        /// is then asked for fewer at once, not at the first recheck).
        var checksFewerAtStart = false
        /// The seconds the work left must last at the measured throughput for more connections to be tried: a step
        /// pays back its new connections' first bytes, its measuring and the risk of a refusal only over a longer
        /// stretch. Nil tries more whatever is left.
        var stepHorizon: Double?
        /// The seconds of work, at a connection's measured rate, that what is left of the file must still give each
        /// connection for a step to add it, where requests are costly (`pieceBytes`): a connection then costs a
        /// request and a slow first byte, and one that would fetch for less than this pays them back for little.
        /// Nil lets steps reach the ceiling.
        var shareHorizon: Double?
        /// Where the first bytes of a cold start's connections (neither remembered nor alone) took at least
        /// `distantFirstByte` seconds (their median, once all of them receive), it opens in waves toward this many
        /// connections before it is measured, as aria2 and axel open 16 at once: on such a server each step costs a
        /// few first bytes (the new connections', settling, a window), and a connection's rate is bound by its
        /// round trips rather than by what the server sends in all. All of them, not the probe's alone: one slow
        /// answer of a loaded machine must not send a server capped in total more connections. Nil starts at
        /// `initial` wherever the server is.
        var distantStart: Int?
        var distantFirstByte = 0.1
        /// The most connections it may choose.
        var ceiling: Int
        /// The share by which a step must raise the throughput to be kept.
        var minimumGain = 0.05
        /// Seconds after a change before measuring, at least: longer when first bytes take longer.
        var settle = 0.02
        /// Seconds a measurement lasts, at least: longer when first bytes take longer.
        var window = 0.05
        /// The most seconds a change settles and a measurement lasts, however slow first bytes are.
        var slowestSettle = 0.5
        var longestWindow = 1.0
        /// Seconds a measurement lasts, at least, before it decides for fewer connections.
        var confirmation = 0.25
        /// Seconds between two tries to add connections while holding.
        var recheckInterval = 15.0
        /// Seconds the count stays at most what the server accepted, after a refusal.
        var refusalCooldown = 60.0
        /// How many times later (and at least 50 ms later) the first byte may come after a step that gained less
        /// than `strongGain`, before the step counts as not paying.
        var firstByteTolerance = 2.0
        /// A gain that a later first byte does not undo: the server is slower to answer, but the step pays well.
        var strongGain = 0.25
        /// What an earlier download from the same server learned (`learned`): the count to start at, when more
        /// than one, and whether the server refused more then (the count is then capped as after a refusal).
        var remembered: Learned?
    }

    /// What a download found out about its server, for the next download from it to start from.
    struct Learned: Equatable, Sendable {
        /// The count it settled on.
        var connections: Int
        /// Whether the server refused a connection beyond it.
        var refused: Bool
    }

    /// Why the count is what it is, for progress displays.
    enum Reason: Equatable, Sendable, CustomStringConvertible {
        case starting
        /// The last step raised the throughput by this many per cent.
        case gained(percent: Int)
        /// The last step, to `tried` connections, raised the throughput by only this many per cent.
        case didNotPay(tried: Int, percent: Int)
        /// The first byte came much later with `tried` connections.
        case slowerFirstByte(tried: Int)
        /// Fewer connections did as well: this many per cent more (or less, when negative) than before.
        case fewerDidAsWell(percent: Int)
        /// Trying `tried` connections lost this many per cent.
        case fewerLost(tried: Int, percent: Int)
        /// The server refused a connection.
        case refused
        case ceiling
        /// The throughput reaches the rate limit: more connections could not use it.
        case rateLimit
        /// Fewer connections than the count ran while it was measured (too little of the file is left to share):
        /// the measurement says nothing about the count.
        case notEnoughWork
        /// An earlier download from this server settled on this many.
        case remembered(Int)
        /// The thread that reads the connections was idle only this many per cent of the time: the
        /// download is as fast as braid can read, and more connections would not be read faster.
        case readerBusy(idlePercent: Int)

        var description: String {
            switch self {
            case .starting: "starting"
            case let .gained(percent): "the last step gained \(percent)%"
            case let .didNotPay(tried, percent): "\(tried) connections gained only \(percent)%"
            case let .slowerFirstByte(tried): "\(tried) connections made the first byte come much later"
            case let .fewerDidAsWell(percent): "fewer connections did as well (\(percent)%)"
            case let .fewerLost(tried, percent): "\(tried) connections lost \(percent)%"
            case .refused: "the server refused a connection"
            case .ceiling: "the ceiling is reached"
            case .rateLimit: "the rate limit is reached"
            case .notEnoughWork: "too little is left to share among more connections"
            case let .remembered(count): "an earlier download from this server settled on \(count)"
            case let .readerBusy(idle):
                "braid reads as fast as it can (its thread was idle \(idle)% of the time): more would not help"
            }
        }
    }

    /// Where it is in its life; a refusal goes to `holding` from any phase but `opening`.
    enum Phase: Equatable, Sendable {
        /// One request runs alone, before its first byte: → `settling` once that byte has come (its one connection
        /// is then measured as any count is).
        case opening
        /// New connections start, or surplus ones end; `since`: when the count changed; `ready`: when every
        /// connection of the new count first ran. → `settling` for the next wave of a step, → `measuring` once the
        /// count has run a while.
        case settling(since: Double, ready: Double?)
        /// A window of throughput: → a decision, a step (`settling`) or `holding`.
        case measuring(Window)
        /// The count is kept: → `measuring` at `until`, the recheck.
        case holding(until: Double)
    }

    /// A measurement of the current count's throughput.
    struct Window: Equatable, Sendable {
        /// When it started, and the bytes received by then.
        var from: Double
        var bytes: Int64
        /// The fewest connections that ran at once during it.
        var fewest: Int
        /// Seconds it lasts: `windowTime`, doubled while its halves disagree.
        var length: Double
        /// The time and bytes received at its first quarter and its middle, once passed.
        var quarter: Mark?
        var middle: Mark?
        /// The seconds the reading thread had been idle in all when it started, when told.
        var readerIdle: Double?

        struct Mark: Equatable, Sendable {
            var time: Double
            var bytes: Int64
        }

        /// The share of its first `elapsed` seconds the reading thread was idle, from its idle seconds in all by now
        /// (`readerIdle`), when both ends were told.
        func readerIdleShare(_ readerIdle: Double?, elapsed: Double) -> Double? {
            self.readerIdle.flatMap { started in readerIdle.map { ($0 - started) / elapsed } }
        }

        /// Whether the rates of its two halves, up to `now` and `receivedTotal`, differ by more than `share` of the
        /// larger.
        func halvesDisagree(now: Double, receivedTotal: Int64, by share: Double) -> Bool {
            guard let middle else { return false }
            return Self.disagree(.init(time: from, bytes: bytes), middle, .init(time: now, bytes: receivedTotal), share)
        }

        /// Whether the rates from `start` to `middle` and from `middle` to `end` differ by more than `share` of the
        /// larger (false when either span is empty).
        static func disagree(_ start: Mark, _ middle: Mark, _ end: Mark, _ share: Double) -> Bool {
            guard middle.time > start.time, end.time > middle.time else { return false }
            let first = Double(middle.bytes - start.bytes) / (middle.time - start.time)
            let second = Double(end.bytes - middle.bytes) / (end.time - middle.time)
            return abs(first - second) > share * max(first, second)
        }
    }

    /// The ceiling when none is given: 16 connections to a server elsewhere (as aria2 allows at most), 64 to one
    /// on this machine, where only the server's own limits and the CPU bound what pays.
    static func defaultCeiling(host: String) -> Int {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        let loopback = name == "localhost" || name == "::1" || name.hasPrefix("127.")
        return loopback ? 64 : 16
    }

    let configuration: Configuration
    private(set) var target: Int
    private(set) var reason = Reason.starting
    private(set) var phase: Phase
    /// The count that gave the best throughput so far, and that throughput (bytes a second).
    private(set) var best: (count: Int, rate: Double)?
    /// The count the server accepted when it last refused one, and until when that caps the count.
    private var refusal: (accepted: Int, until: Double)?
    /// What requests cost (the recent times to first byte, a connection's rate), and so how much one may fetch.
    private(set) var sizer = PieceSizer()
    /// How much one request may fetch when requests are costly (`PieceSizer.pieceBytes`).
    var pieceBytes: Int64? { sizer.pieceBytes }
    /// Times to first byte of requests answered since the count last changed, and at the best count.
    private var firstBytes: [Double] = []
    private var bestFirstByte: Double?
    /// The count it started with and why, and when it is to be checked with half as many.
    private let startingCount: Int
    private let startingReason: Reason
    private var fewerCheck: FewerCheck?
    /// The count a step up is going to while it opens its connections in waves (`wave(after:toward:)`): each wave
    /// starts once every connection of the one before receives, so that a server that takes no more refuses one wave's
    /// connections, not the whole step's. Nil once the count is reached, or when the step was a single wave.
    private(set) var waveGoal: Int?
    /// The bytes of the file still to come at the last sample, when told.
    private var left: Int64?
    /// Whether the starting count's first bytes were looked at for a distant start, once all its connections ran.
    private var distantChecked = false

    private enum FewerCheck: Equatable {
        /// When the first step up from the starting count does not pay.
        case afterFirstStep
        /// After the first recheck's measurement.
        case atRecheck
        /// After this measurement.
        case now
    }

    init(configuration: Configuration, now: Double) {
        self.configuration = configuration
        if let remembered = configuration.remembered, remembered.connections > 1, configuration.ceiling > 1 {
            target = min(remembered.connections, configuration.ceiling)
            reason = .remembered(remembered.connections)
            phase = .settling(since: now, ready: nil)
            fewerCheck = .atRecheck
            if remembered.refused { refusal = (target, now + configuration.refusalCooldown) }
        } else if configuration.opensAlone {
            target = 1
            phase = .opening
        } else {
            target = max(1, min(configuration.initial, configuration.ceiling))
            phase = .settling(since: now, ready: nil)
            if configuration.checksFewerAtStart, target > 1 { fewerCheck = .afterFirstStep }
        }
        startingCount = target
        startingReason = reason
    }

    static func == (left: ConnectionPolicy, right: ConnectionPolicy) -> Bool {
        left.configuration == right.configuration && left.target == right.target && left.reason == right.reason
            && left.phase == right.phase && left.best?.count == right.best?.count
            && left.best?.rate == right.best?.rate
    }

    /// The count to report as the one it settled on: the one it holds, or while a step is still being tried, the
    /// best one measured (a download that ends mid-step never ran the count it was stepping to).
    var settled: Int {
        if case .holding = phase { return target }
        if let best, best.count != target { return best.count }
        return target
    }

    /// What this download found out about the server, for the next one to start from: the count it holds after a
    /// decision (not one that a rate limit or too little work left forced), or on a ramp cut short by the end of
    /// the file, the most connections it measured paying; nil when it measured nothing that tells.
    /// It says the server refuses more while the count is no more than what the server last accepted (a refusal
    /// remembered, and not disproved by more connections since, still counts).
    var learned: Learned? {
        func learned(_ count: Int) -> Learned {
            Learned(connections: count, refused: refusal.map { count <= $0.accepted } ?? false)
        }
        if case .holding = phase, reason != .rateLimit, reason != .notEnoughWork { return learned(target) }
        guard let best, best.count > startingCount else { return nil }
        return learned(best.count)
    }

    /// The most connections allowed now: the ceiling, or what the server accepted while a refusal is recent.
    func ceiling(now: Double) -> Int {
        guard let refusal, now < refusal.until else { return configuration.ceiling }
        return min(configuration.ceiling, refusal.accepted)
    }

    // MARK: Events

    /// Time passed: `receivedTotal` bytes have arrived so far, `active` connections are running, `receiving` of
    /// them have had their response's first byte (all of them, when not given), `rateLimit` (bytes a second)
    /// caps the download, if anything does, the thread that reads the connections has been idle (not running
    /// on a CPU) `readerIdle` seconds in all (when it is measured), and `left` bytes of the file are still to come
    /// (when told, for `stepHorizon`). Returns whether `target` changed.
    mutating func sample(
        now: Double, receivedTotal: Int64, active: Int, receiving: Int? = nil, rateLimit: Double?,
        readerIdle: Double? = nil, left: Int64? = nil
    ) -> Bool {
        if let left { self.left = left }
        // A connection still waiting for its first byte receives nothing: it would make each one look slower.
        sizer.sample(now: now, receivedTotal: receivedTotal, active: receiving ?? active)
        switch phase {
        case .opening:
            // The opening request has told what a request costs: its one connection settles and is measured.
            if sizer.typicalFirstByte != nil { settle(now: now) }
            return false
        case let .settling(since, ready):
            return sampleSettling(
                since: since, ready: ready, now: now, receivedTotal: receivedTotal, active: active,
                receiving: receiving, readerIdle: readerIdle)
        case let .measuring(window):
            return sampleMeasuring(
                window, now: now, receivedTotal: receivedTotal, active: active, rateLimit: rateLimit,
                readerIdle: readerIdle)
        case let .holding(until):
            guard now >= until else { return false }
            // Measure the current count again: the next decision compares a step with it, not with the past.
            best = nil
            firstBytes = []
            if fewerCheck == .atRecheck, target > 1 { fewerCheck = .now }
            startMeasuring(now: now, receivedTotal: receivedTotal, active: active, readerIdle: readerIdle)
            return false
        }
    }

    /// `sample` while a new count settles.
    private mutating func sampleSettling(
        since: Double, ready: Double?, now: Double, receivedTotal: Int64, active: Int, receiving: Int?,
        readerIdle: Double?
    ) -> Bool {
        // The new count runs once as many connections as it holds receive (a step up) or no more run (a step
        // down); measuring starts a while after, or after a while in any case if some cannot start (the end of
        // the file, a shared budget): what runs is then what the count gives.
        let runs = active <= target && (receiving ?? active) >= target
        if runs, waveGoal == nil, !distantChecked {
            distantChecked = true
            waveGoal = distantGoal
        }
        // A wave goes no further than what is left gives work to (`shareHorizon`).
        if runs, let goal = waveGoal.map({ min($0, workCeiling ?? $0) }), goal > target {
            // The wave receives (nothing was refused): the next one starts. The step settles as one.
            target = Self.wave(after: target, toward: goal)
            waveGoal = target < goal ? goal : nil
            phase = .settling(since: now, ready: nil)
            return true
        }
        if runs { waveGoal = nil }
        let ready = ready ?? (runs ? now : nil)
        phase = .settling(since: since, ready: ready)
        let settled = ready.map { now >= max($0 + settleTime, since + configuration.settle) } ?? false
        guard settled || now >= since + settleTime + 2 else { return false }
        // A wave that cannot fill (the end of the file, a shared budget) ends the step where it is.
        waveGoal = nil
        startMeasuring(now: now, receivedTotal: receivedTotal, active: active, readerIdle: readerIdle)
        return false
    }

    /// `sample` while the count is measured.
    private mutating func sampleMeasuring(
        _ window: Window, now: Double, receivedTotal: Int64, active: Int, rateLimit: Double?, readerIdle: Double?
    ) -> Bool {
        var window = window
        window.fewest = min(window.fewest, active)
        let elapsed = now - window.from
        let mark = Window.Mark(time: now, bytes: receivedTotal)
        if window.quarter == nil, elapsed >= window.length / 4 { window.quarter = mark }
        if window.middle == nil, elapsed >= window.length / 2 {
            window.middle = mark
            let idle = window.readerIdleShare(readerIdle, elapsed: elapsed)
            // A reader that looks busy over half a window is not clear: the whole window decides that.
            if clearlyPays(window, at: mark), idle.map({ !readerIsBusy(idle: $0) }) ?? true {
                return decide(
                    rate: Double(receivedTotal - window.bytes) / elapsed, idle: idle, now: now,
                    rateLimit: rateLimit)
            }
        }
        guard elapsed >= window.length else {
            phase = .measuring(window)
            return false
        }
        guard window.fewest >= target else {
            hold(.notEnoughWork, now: now)
            return false
        }
        // Halves that disagree by more than a step must gain say that the throughput moves more than the
        // decision could tell (a busy CPU, another download): the window doubles, up to the longest.
        if window.length * 2 <= configuration.longestWindow,
            window.halvesDisagree(now: now, receivedTotal: receivedTotal, by: 2 * configuration.minimumGain)
        {
            window.length *= 2
            window.middle = .init(time: now, bytes: receivedTotal)
            phase = .measuring(window)
            return false
        }
        let rate = Double(receivedTotal - window.bytes) / elapsed
        // A decision for fewer connections waits for a longer measurement, unless a step clearly lost.
        if elapsed < max(window.length, configuration.confirmation),
            !favoursMore(rate: rate, rateLimit: rateLimit), !stepClearlyLost(rate: rate)
        {
            phase = .measuring(window)
            return false
        }
        let idle = window.readerIdleShare(readerIdle, elapsed: elapsed)
        return decide(rate: rate, idle: idle, now: now, rateLimit: rateLimit)
    }

    /// The time to a first byte lately (`PieceSizer.typicalFirstByte`), or nil before any.
    private var typicalFirstByte: Double? { sizer.typicalFirstByte }

    /// How long a new count runs, once all its connections receive, before it is measured: the quickest first byte,
    /// at least `settle`, at most `slowestSettle` (first bytes that a stalled start made slow must not stop the
    /// measuring). Each step costs a server's first byte, for the new connections, and this, and a window: where
    /// first bytes are slow these are kept short, the window's halves lengthening it where the rate is noisy.
    private var settleTime: Double {
        min(configuration.slowestSettle, max(configuration.settle, typicalFirstByte ?? 0))
    }

    /// How long a measurement lasts: two and a half quickest first bytes, at least `window`, at most
    /// `longestWindow`.
    private var windowTime: Double {
        min(configuration.longestWindow, max(configuration.window, 2.5 * (typicalFirstByte ?? 0)))
    }

    /// Whether a measured `rate` is a decision for more connections: a step up that pays, a try with fewer that
    /// lost, a first measurement, or a rate limit reached (which decides at once).
    private func favoursMore(rate: Double, rateLimit: Double?) -> Bool {
        if let rateLimit, rate >= rateLimit * 0.95 { return true }
        guard let best, best.count != target else { return true }
        if best.count < target { return Self.gain(of: rate, over: best.rate) >= configuration.minimumGain }
        return rate < best.rate * (1 - configuration.minimumGain)
    }

    /// Whether the first half of a step up's `window`, ending at `middle`, already decides it: that half lasted at
    /// least `window` (the window is long because first bytes are slow), every connection ran, its own halves agree
    /// within twice `minimumGain`, and the step gained at least `strongGain`. A gain many times what a step must
    /// make is not undone by what the rest of the window could measure (as a sequential test stops once the evidence
    /// is overwhelming), and the rest would be a server's first byte more at the count that is being left.
    private func clearlyPays(_ window: Window, at middle: Window.Mark) -> Bool {
        guard let best, best.count < target, window.fewest >= target, let quarter = window.quarter,
            middle.time - window.from >= configuration.window
        else { return false }
        let start = Window.Mark(time: window.from, bytes: window.bytes)
        guard !Window.disagree(start, quarter, middle, 2 * configuration.minimumGain) else { return false }
        let rate = Double(middle.bytes - window.bytes) / (middle.time - window.from)
        return Self.gain(of: rate, over: best.rate) >= configuration.strongGain
    }

    /// Whether the reading thread, idle `idle` of a window, is the limit: even using every idle moment would not
    /// raise the rate by `minimumGain`.
    private func readerIsBusy(idle: Double) -> Bool {
        idle < configuration.minimumGain / (1 + configuration.minimumGain)
    }

    /// Whether a measured `rate` is that of a step up that lost more than twice `minimumGain`.
    private func stepClearlyLost(rate: Double) -> Bool {
        guard let best, best.count < target else { return false }
        return rate < best.rate * (1 - 2 * configuration.minimumGain)
    }

    /// Starts a measurement window of the current count.
    private mutating func startMeasuring(now: Double, receivedTotal: Int64, active: Int, readerIdle: Double?) {
        phase = .measuring(
            Window(from: now, bytes: receivedTotal, fewest: active, length: windowTime, readerIdle: readerIdle))
    }

    /// The count changed (or is to be measured again): it settles, and the first bytes of its requests, the new
    /// connections' first included, are its own.
    private mutating func settle(now: Double) {
        phase = .settling(since: now, ready: nil)
        firstBytes = []
        waveGoal = nil
    }

    /// A request's first byte came `seconds` after it was sent (connecting not counted).
    mutating func firstByte(after seconds: Double) {
        if firstBytes.count < 256 { firstBytes.append(seconds) }
        sizer.firstByte(after: seconds)
    }

    /// The goal of a distant start (`Configuration.distantStart`), when the starting count, now all receiving, is a
    /// cold start whose first bytes came slowly; nil otherwise, and once its connections were measured or changed.
    private var distantGoal: Int? {
        guard let distant = configuration.distantStart, !configuration.opensAlone, startingReason == .starting,
            reason == .starting,
            best == nil, target == startingCount, let firstByte = Self.median(firstBytes),
            firstByte >= configuration.distantFirstByte
        else { return nil }
        let goal = min(distant, configuration.ceiling)
        return goal > target ? goal : nil
    }

    /// The most connections among which what is left of the file still gives each `shareHorizon` seconds of work at
    /// a connection's measured rate (at least one); nil while either is unknown, where requests are cheap, or
    /// without a horizon.
    private var workCeiling: Int? {
        guard let horizon = configuration.shareHorizon, sizer.pieceBytes != nil, let left,
            let rate = sizer.perConnectionRate, rate > 0
        else { return nil }
        return max(1, Int(min(1e6, Double(left) / (rate * horizon))))
    }

    /// The server refused a connection while `accepted` others ran: the count drops to those, and stays at most
    /// that for `refusalCooldown`. Returns whether `target` changed.
    mutating func refused(now: Double, accepted: Int) -> Bool {
        // The opening request alone says nothing of how many the server takes: it is retried, still alone.
        if case .opening = phase { return false }
        let accepted = max(1, accepted)
        refusal = (accepted, now + configuration.refusalCooldown)
        let previous = target
        target = min(target, accepted)
        if let best, best.count > accepted { self.best = nil }
        reason = .refused
        phase = .holding(until: now + configuration.refusalCooldown)
        waveGoal = nil
        return target != previous
    }

    // MARK: Decisions

    /// The connections what is left of the file is shared among (`SegmentScheduler.assign`'s `sharingAmong`) where
    /// requests are costly: the count, the goal its waves go to, or while fewer run, as many as a distant start
    /// opens (within the ceiling and what the server accepted), the count a step from 8 reaches where more pay. So a
    /// connection added later gets a share as large as the first ones' rather than half of a lagging one's, and
    /// they all end together.
    var sharingCount: Int {
        let allowed = min(configuration.ceiling, refusal?.accepted ?? .max)
        return max(target, waveGoal ?? 0, min(configuration.distantStart ?? 0, allowed))
    }

    /// How much the next request may fetch, of a file of `totalLength` bytes: the opening request, `openingPiece`
    /// at most; until a first byte came and a connection's rate was sampled, the first connections share the file
    /// (at most 16 MiB each, or `openingPiece` each when they start at a remembered count or the first byte was
    /// slow), so that a server where requests are costly is not sent many small ones before that is known; after,
    /// where requests are costly (`pieceBytes`), no more than each connection's share of what waits: one request
    /// a connection, the connections ending together, a lagging one's rest taken over by one that is idle.
    func pieceSize(totalLength: Int64) -> Int64? {
        if case .opening = phase { return min(configuration.openingPiece, totalLength) }
        guard !sizer.hasMeasured else { return pieceBytes.map { _ in .max } }
        // A remembered count starts all its connections at once, and a slow first byte says requests are costly:
        // they share the file evenly, one request each where the file allows (at most `openingPiece`), as a fixed
        // count's first requests do.
        guard case .remembered = startingReason else {
            if (sizer.typicalFirstByte ?? 0) >= PieceSizer.slowFirstByte { return configuration.openingPiece }
            if configuration.checksFewerAtStart { return nil }
            return min(16 << 20, totalLength / Int64(max(1, configuration.initial)))
        }
        return max(1, min(configuration.openingPiece, totalLength / Int64(max(1, target))))
    }

    /// Decides from a window's `rate`, and the share of it the reading thread was idle (`idle`, when measured).
    private mutating func decide(rate: Double, idle: Double?, now: Double, rateLimit: Double?) -> Bool {
        let firstByte = Self.median(firstBytes)
        // Even using every idle moment would not raise the rate by `minimumGain`: braid is the bottleneck.
        let readerBusy = idle.flatMap { idle in
            readerIsBusy(idle: idle) ? Reason.readerBusy(idlePercent: Int((max(0, idle) * 100).rounded())) : nil
        }
        if let rateLimit, rate >= rateLimit * 0.95 {
            // The count reaches the limit (a try with fewer included): it is kept.
            best = (target, rate)
            bestFirstByte = firstByte
            hold(.rateLimit, now: now)
            return false
        }
        guard let best, best.count != target else {
            // The first measurement, or the current count measured again after holding.
            self.best = (target, rate)
            bestFirstByte = firstByte
            // A remembered count, measured again at the first recheck: half as many are tried, once.
            if fewerCheck == .now {
                fewerCheck = nil
                stepDown(now: now)
                return true
            }
            if let readerBusy {
                hold(readerBusy, now: now)
                return false
            }
            return stepUp(gain: nil, now: now)
        }
        if best.count > target { return decideFewer(rate: rate, than: best, firstByte: firstByte, now: now) }
        let gain = Self.gain(of: rate, over: best.rate)
        let tried = target
        let slower =
            firstByte.flatMap { firstByte in
                bestFirstByte.map { firstByte > $0 * configuration.firstByteTolerance && firstByte - $0 > 0.05 }
            } ?? false
        let slowerFirstByte = slower && gain < configuration.strongGain
        if gain < configuration.minimumGain || slowerFirstByte {
            target = best.count
            hold(
                slowerFirstByte
                    ? .slowerFirstByte(tried: tried) : .didNotPay(tried: tried, percent: Int((gain * 100).rounded())),
                now: now)
            // More connections lost throughput: they cost more than they bring, so fewer may do as well; and a
            // start not yet known to pay is checked with fewer as soon as more do not pay.
            let checksFewer = fewerCheck == .afterFirstStep
            if checksFewer { fewerCheck = nil }
            if gain < 0 || checksFewer, target > 1 { stepDown(now: now) }
            return true
        }
        // Near-linear: the step gained at least 80 % of what the added connections would at the old rate each.
        // The start paid to step up from: it is not to be checked with fewer.
        if fewerCheck == .afterFirstStep { fewerCheck = nil }
        let linearGain = Double(target) / Double(best.count) - 1
        let linear = gain >= 0.8 * linearGain
        // A step to four times as many or more that gained under half of that: the count that pays lies below.
        let overshot = target >= 4 * best.count && gain < 0.5 * linearGain
        self.best = (target, rate)
        bestFirstByte = firstByte
        if let readerBusy {
            hold(readerBusy, now: now)
            return false
        }
        if overshot {
            // Half as many are tried, and kept (and halved again) while they do as well.
            reason = .gained(percent: Int((gain * 100).rounded()))
            stepDown(now: now)
            return true
        }
        // Under a rate limit, no more than the connections that, at this count's rate each, reach it.
        let usable = rateLimit.map { limit in Int(min(1e6, (limit * Double(target) / max(1, rate)).rounded(.up))) }
        return stepUp(gain: gain, linear: linear, usable: usable, now: now)
    }

    /// A try with fewer connections than the `best` count was measured: kept if it loses less than `minimumGain`
    /// (and then fewer still are tried), else the best count comes back and is held.
    private mutating func decideFewer(
        rate: Double, than best: (count: Int, rate: Double), firstByte: Double?, now: Double
    ) -> Bool {
        let tried = target
        let gain = Self.gain(of: rate, over: best.rate)
        guard rate >= best.rate * (1 - configuration.minimumGain) else {
            target = best.count
            hold(.fewerLost(tried: tried, percent: Int((-gain * 100).rounded())), now: now)
            return true
        }
        self.best = (target, rate)
        bestFirstByte = firstByte
        hold(.fewerDidAsWell(percent: Int((gain * 100).rounded())), now: now)
        guard target > 1 else { return false }
        stepDown(now: now)
        return true
    }

    /// Tries half as many connections (at least one), keeping the reason the count last changed.
    private mutating func stepDown(now: Double) {
        target = max(1, target / 2)
        settle(now: now)
    }

    /// Adds connections: from fewer than `initial` (the opening request's one) straight to `initial`; after a step that
    /// scaled almost linearly (the connections are capped one by one, so each new one adds as much), sixteen times as
    /// many, at most the ceiling and the `usable` ones (those that reach a rate limit at the measured rate each),
    /// opened in waves (`wave(after:toward:)`) and measured as one step: where each step costs a server's slow first
    /// bytes, few steps reach the count that pays, and the waves keep a server that takes no more than 8 (a common
    /// limit) to refusing 4, as a step of its own would. Otherwise doubling up to 8, then half as many again. None
    /// while the work left lasts less than `stepHorizon` at the best throughput. Returns whether the count changed.
    private mutating func stepUp(gain: Double?, linear: Bool = false, usable: Int? = nil, now: Double) -> Bool {
        let ceiling = ceiling(now: now)
        guard target < ceiling else {
            hold(.ceiling, now: now)
            return false
        }
        if let horizon = configuration.stepHorizon, let left, let best,
            Double(left) < horizon * max(1, best.rate)
        {
            hold(.notEnoughWork, now: now)
            return false
        }
        // No more connections than what is left gives `shareHorizon` seconds of work each.
        let workCeiling = workCeiling ?? .max
        guard workCeiling > target else {
            hold(.notEnoughWork, now: now)
            return false
        }
        reason = gain.map { .gained(percent: Int(($0 * 100).rounded())) } ?? .starting
        settle(now: now)
        if linear && target >= configuration.initial {
            let goal = max(target + 1, min(ceiling, target * 16, usable ?? .max, workCeiling))
            target = Self.wave(after: target, toward: goal)
            if target < goal { waveGoal = goal }
        } else {
            target = min(
                ceiling, workCeiling, max(target < 8 ? target * 2 : target + target / 2, configuration.initial))
        }
        return true
    }

    /// The next wave of a step to `goal` opened in waves: doubling up to 8, then 12 (a server that takes 8 refuses
    /// 4), then four times as many, or the goal once that is within a quarter of it (a last small wave would cost a
    /// server's first byte for little).
    static func wave(after count: Int, toward goal: Int) -> Int {
        guard count >= 12 else { return min(goal, count < 8 ? count * 2 : 12) }
        return count * 4 * 4 >= goal * 3 ? goal : min(goal, count * 4)
    }

    /// Keeps the count until the next recheck.
    private mutating func hold(_ why: Reason, now: Double) {
        reason = why
        phase = .holding(until: now + configuration.recheckInterval)
    }

    /// The share by which `rate` beats `best` (negative when it falls short).
    private static func gain(of rate: Double, over best: Double) -> Double {
        rate / max(1, best) - 1
    }

    private static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }
}
