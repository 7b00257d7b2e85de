import Braid
import Synchronization

/// Shows a list run on stderr: one status line for the whole list (files done of all, bytes, speed, time left),
/// redrawn in place on a terminal and written as a plain line every few seconds elsewhere; a line of its own for
/// each failure, notice and retry as it happens; and a summary at the end.
final class ListReporter: ListObserver {
    /// A running download as the status line counts it.
    private struct Running {
        var progress: DownloadProgress?
        /// Bytes it had on disk when it started, which this run did not fetch.
        var resumed: Int64 = 0
        var total: Int64?
        /// Where it writes, once it started: its name in the lines about it.
        var path: String?
    }

    private struct State {
        var count = 0
        var finished = 0
        var failed = 0
        /// Bytes of the files finished, and how many of them this run fetched.
        var finishedBytes: Int64 = 0
        var finishedFetched: Int64 = 0
        /// Finished and started files whose length is known: their count and bytes, to guess the others'.
        var known = (count: 0, bytes: Int64(0))
        var running: [Int: Running] = [:]
        /// When the status line was last shown (or the list started).
        var lastLine: ContinuousClock.Instant
        /// Bytes fetched so far, sampled over the last few seconds, for the speed.
        var samples: [(time: ContinuousClock.Instant, fetched: Int64)] = []
    }

    /// Longer lists list only their failures in the summary table: a thousand rows would bury them.
    static let fullTableLimit = 20

    private let quiet: Bool
    private let statusLine = StatusLine()
    private let clock = ContinuousClock()
    /// How often the status line is shown: redrawn on a terminal, a new line elsewhere.
    private let interval: Duration
    private let speedWindow: Duration = .seconds(5)
    private let state: Mutex<State>

    init(quiet: Bool) {
        self.quiet = quiet
        interval = statusLine.isTerminal ? .milliseconds(200) : .seconds(5)
        state = Mutex(State(lastLine: clock.now))
    }

    func notice(_ message: String) {
        line(message)
    }

    func failed(_ error: BraidError) {
        line("braid: \(error.commandLineMessage(inList: true))", evenIfQuiet: true)
    }

    func listStarted(_ items: [DownloadItem], limits: DownloadManager.Limits, directory: String) {
        state.withLock {
            $0.count = items.count
            $0.lastLine = clock.now
        }
        let files = items.count == 1 ? "1 file" : "\(items.count) files"
        let caps = "\(limits.maximumConnections) connections, \(limits.maximumConnectionsPerHost) per host"
        let pace: String
        switch limits.concurrentDownloads {
        case let .fixed(count): pace = "\(count) at a time (at most \(caps))"
        case .automatic: pace = "as many at a time as the connections allow (at most \(caps))"
        }
        line("Downloading \(files) into \(PrintableText.escapingControlCharacters(directory)), \(pace)")
    }

    /// States and results say nothing the status line or the table shows (`finished` has the result).
    var readsStates: Bool { false }

    func handle(_ event: DownloadEvent, of item: DownloadItem) {
        switch event {
        case let .started(resource, path, resumedBytes):
            state.withLock { state in
                if state.running[item.id]?.total == nil, let length = resource.length {
                    state.known.count += 1
                    state.known.bytes += length
                }
                state.running[item.id] = Running(
                    progress: nil, resumed: resumedBytes, total: resource.length, path: path)
            }
        case let .progress(progress):
            state.withLock { $0.running[item.id, default: Running()].progress = progress }
            showStatus()
        case let .retry(reason, delay):
            line("\(tag(item)) \(name(item)): retrying in \(Formatting.fixed(delay, digits: 1)) s: \(reason)")
        case let .notice(message):
            line("\(tag(item)) \(name(item)): \(message)")
        case .state, .completed:
            break
        }
    }

    func finished(_ outcome: DownloadOutcome) {
        state.withLock { state in
            let running = state.running.removeValue(forKey: outcome.item.id)
            state.finished += 1
            switch outcome.result {
            case let .success(result):
                state.finishedBytes += result.bytes
                state.finishedFetched += result.fetchedBytes
                if running?.total == nil {
                    state.known.count += 1
                    state.known.bytes += result.bytes
                }
            case .failure:
                state.failed += 1
            }
        }
        // One interrupted before it chose its file is counted in the summary, not told of: a signal ends every
        // waiting entry of a list at once, and a line for each of a hundred thousand would bury the rest.
        if case let .failure(error) = outcome.result, !Self.interruptedUnstarted(error, path: outcome.path) {
            line(
                "braid: \(tag(outcome.item)) \(outcome.name): \(error.commandLineMessage(inList: true))",
                evenIfQuiet: true
            )
        }
        showStatus()
    }

    func listFinished(_ outcomes: [DownloadOutcome.Summary], status: Int32, seconds: Double) {
        guard !quiet else { return }
        let failed = outcomes.filter { $0.error != nil }
        // Those interrupted before they chose a file (most of a long list stopped by a signal) are one line.
        let told = failed.filter { !Self.interruptedUnstarted($0.error, path: $0.path) }
        let unstarted = failed.count - told.count
        let short = outcomes.count <= Self.fullTableLimit
        let rows = short ? outcomes : told
        var text = rows.isEmpty ? "" : Self.table(rows)
        for outcome in short ? failed : told {
            text += "\(outcome.name): \(outcome.error?.commandLineMessage(inList: true) ?? "")\n"
        }
        if !short && unstarted > 0 {
            let (was, it) = unstarted == 1 ? ("was", "it") : ("were", "they")
            text += "\(unstarted) more \(was) interrupted before \(it) started\n"
        }
        text +=
            "\(outcomes.count - failed.count) of \(outcomes.count) succeeded, \(failed.count) failed, in "
            + "\(Formatting.fixed(seconds, digits: 1)) s; exit status \(status)"
        statusLine.print(text)
    }

    /// Whether a download that ended with `error`, its file at `path` (nil until it chose one), was interrupted before
    /// it chose its file: waiting in line, or asking the server, when the signal came.
    static func interruptedUnstarted(_ error: BraidError?, path: String?) -> Bool {
        error?.code == .interrupted && path == nil
    }

    /// The summary table: file, outcome (with the bytes an earlier run left, when it resumed), size and time, one
    /// row per download in list order.
    static func table(_ outcomes: [DownloadOutcome.Summary]) -> String {
        let header = ["file", "outcome", "size", "time"]
        let rows: [[String]] = outcomes.map { outcome in
            let what =
                switch outcome.ending {
                case let .completed(_, resumedBytes, verification):
                    "completed (\(verification)"
                        + (resumedBytes > 0 ? "; \(Formatting.bytes(resumedBytes)) resumed)" : ")")
                case let .skipped(_, unmodified): "skipped (\(unmodified ? "up to date" : "already complete"))"
                case let .failed(error): "\(outcome.outcome) (exit \(ExitStatus(error.code).rawValue))"
                }
            return [
                outcome.name, what, outcome.bytes.map(Formatting.bytes) ?? "-",
                Formatting.fixed(outcome.seconds, digits: 1) + " s",
            ]
        }
        let all = [header] + rows
        let widths = (0..<header.count).map { column in all.map { $0[column].count }.max() ?? 0 }
        var text = ""
        for row in all {
            let left = row[0] + String(repeating: " ", count: widths[0] - row[0].count)
            let middle = row[1] + String(repeating: " ", count: widths[1] - row[1].count)
            text +=
                left + "  " + middle + "  " + Formatting.padded(row[2], width: widths[2]) + "  "
                + Formatting.padded(row[3], width: widths[3]) + "\n"
        }
        return text
    }

    /// `[2/5]`: the download's place in the list.
    private func tag(_ item: DownloadItem) -> String {
        "[\(item.id)/\(state.withLock { $0.count })]"
    }

    /// The name of the file a running download writes, else the one its item gives.
    private func name(_ item: DownloadItem) -> String {
        item.name(ofFileAt: state.withLock { $0.running[item.id]?.path })
    }

    /// The status line, when one is due: live on a terminal, a permanent line every few seconds elsewhere. The
    /// first comes one interval after the list started, so a list that is over sooner shows none.
    private func showStatus() {
        guard !quiet else { return }
        let now = clock.now
        let text = state.withLock { state -> String? in
            let fetched =
                state.finishedFetched
                + state.running.values.reduce(Int64(0)) {
                    $0 + max(0, ($1.progress?.downloadedBytes ?? 0) - $1.resumed)
                }
            state.samples.append((now, fetched))
            if let first = state.samples.first, now - first.time > speedWindow, state.samples.count > 1 {
                state.samples.removeFirst(state.samples.firstIndex { now - $0.time <= speedWindow } ?? 0)
            }
            guard now - state.lastLine >= interval else { return nil }
            state.lastLine = now
            return Self.status(state, fetched: fetched, now: now)
        }
        guard let text else { return }
        if statusLine.isTerminal { statusLine.showLive(text) } else { statusLine.print(text) }
    }

    /// `12/30 files  4.0 MiB/~9.8 MiB  3.1 MiB/s  ETA 2s  16 running`: the total is marked `~` while the length of
    /// some files is guessed as the mean of those known so far.
    private static func status(_ state: State, fetched: Int64, now: ContinuousClock.Instant) -> String {
        var text = "\(state.finished)/\(state.count) files"
        if state.failed > 0 { text += " (\(state.failed) failed)" }
        let running = state.running.values
        let done = state.finishedBytes + running.reduce(Int64(0)) { $0 + ($1.progress?.downloadedBytes ?? 0) }
        text += "  " + Formatting.bytes(done)
        let guessed = state.count - state.finished - running.filter { $0.total != nil }.count
        let mean = state.known.count > 0 ? state.known.bytes / Int64(state.known.count) : nil
        var total: Int64? = state.finishedBytes + running.reduce(Int64(0)) { $0 + ($1.total ?? 0) }
        if guessed > 0 { total = mean.map { total! + Int64(guessed) * $0 } }
        if let total { text += "/" + (guessed > 0 ? "~" : "") + Formatting.bytes(total) }
        var speed = 0.0
        if let first = state.samples.first, now - first.time > .zero {
            speed = Double(fetched - first.fetched) / (now - first.time).seconds
        }
        text += "  \(Formatting.bytes(Formatting.integer(speed)))/s"
        if let total, speed > 0 { text += "  ETA " + Formatting.duration(Double(max(0, total - done)) / speed) }
        return text + "  \(running.count) running"
    }

    private func line(_ message: String, evenIfQuiet: Bool = false) {
        guard !quiet || evenIfQuiet else { return }
        statusLine.print(message)
    }
}
