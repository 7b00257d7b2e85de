import Braid
import Synchronization

/// Shows a list run on stderr: a line each time a download changes state, a live line with the totals on a
/// terminal, and a table of every file and its outcome at the end.
final class ListReporter: ListObserver {
    private struct State {
        var count = 0
        var finished = 0
        var running: [Int: DownloadProgress] = [:]
        var names: [Int: String] = [:]
        var lastLive: ContinuousClock.Instant?
    }

    private let quiet: Bool
    private let statusLine = StatusLine()
    private var isTerminal: Bool { statusLine.isTerminal }
    private let clock = ContinuousClock()
    private let liveInterval: Duration = .milliseconds(200)
    private let state = Mutex(State())

    init(quiet: Bool) {
        self.quiet = quiet
    }

    func notice(_ message: String) {
        line(message)
    }

    func failed(_ error: BraidError) {
        line("braid: \(error.commandLineMessage(inList: true))", evenIfQuiet: true)
    }

    func listStarted(_ items: [DownloadItem], limits: DownloadManager.Limits, directory: String) {
        state.withLock { $0.count = items.count }
        let files = items.count == 1 ? "1 file" : "\(items.count) files"
        guard case let .fixed(concurrency) = limits.concurrentDownloads else {
            preconditionFailure("Invalid state: a list runs a fixed number of downloads at a time")
        }
        line(
            "Downloading \(files) into \(PrintableText.escapingControlCharacters(directory)), "
                + "\(concurrency) at a time "
                + "(at most \(limits.maximumConnections) connections, \(limits.maximumConnectionsPerHost) per host)"
        )
    }

    func handle(_ event: DownloadEvent, of item: DownloadItem) {
        switch event {
        case let .state(state):
            switch state {
            case .probing: line("\(tag(item)) probing \(PrintableText.sanitised(item.url))")
            case .paused: line("\(tag(item)) paused \(name(item))")
            case .verifying: line("\(tag(item)) verifying \(name(item))")
            // `downloading` is announced with the size by `.started`; the final states by `finished(_:)`.
            case .queued, .downloading, .completed, .failed, .cancelled: break
            }
        case let .started(resource, path, resumedBytes):
            let name = PrintableText.escapingControlCharacters(path.split(separator: "/").last.map(String.init) ?? path)
            state.withLock { $0.names[item.id] = name }
            let size = resource.length.map(Formatting.bytes) ?? "unknown size"
            let resuming = resumedBytes > 0 ? ", resuming at \(Formatting.bytes(resumedBytes))" : ""
            let mode = resource.isSegmentable ? "" : ", single stream"
            line("\(tag(item)) downloading \(name) (\(size)\(resuming)\(mode))")
        case let .progress(progress):
            state.withLock { $0.running[item.id] = progress }
            showLiveLine()
        case let .retry(reason, delay):
            line("\(tag(item)) \(name(item)): retrying in \(Formatting.fixed(delay, digits: 1)) s: \(reason)")
        case let .notice(message):
            line("\(tag(item)) \(name(item)): \(message)")
        case .completed:
            break
        }
    }

    func finished(_ outcome: DownloadOutcome) {
        state.withLock { state in
            state.finished += 1
            state.running[outcome.item.id] = nil
        }
        switch outcome.result {
        case let .success(result):
            if outcome.skipped {
                line("\(tag(outcome.item)) skipped \(outcome.name): \(outcome.skipReason)")
            } else {
                line(
                    "\(tag(outcome.item)) completed \(outcome.name) (\(Formatting.bytes(result.bytes)), "
                        + "\(Self.verification(result)), \(Formatting.fixed(result.seconds, digits: 1)) s)"
                )
            }
        case let .failure(error):
            line(
                "braid: \(tag(outcome.item)) \(outcome.name): \(error.commandLineMessage(inList: true))",
                evenIfQuiet: true
            )
        }
    }

    func listFinished(_ outcomes: [DownloadOutcome], status: Int32, seconds: Double) {
        guard !quiet else { return }
        var text = Self.table(outcomes)
        let failed = outcomes.filter { $0.error != nil }
        for outcome in failed {
            text += "\(outcome.name): \(outcome.error?.commandLineMessage(inList: true) ?? "")\n"
        }
        text +=
            "\(outcomes.count - failed.count) of \(outcomes.count) succeeded, \(failed.count) failed, in "
            + "\(Formatting.fixed(seconds, digits: 1)) s; exit status \(status)"
        statusLine.print(text)
    }

    /// The summary table: file, outcome, size and time, one row per download in list order.
    static func table(_ outcomes: [DownloadOutcome]) -> String {
        let header = ["file", "outcome", "size", "time"]
        let rows: [[String]] = outcomes.map { outcome in
            switch outcome.result {
            case let .success(result):
                let what = outcome.skipped ? "skipped (\(outcome.skipReason))" : "completed (\(verification(result)))"
                return [
                    outcome.name, what, Formatting.bytes(result.bytes),
                    Formatting.fixed(outcome.seconds, digits: 1) + " s",
                ]
            case let .failure(error):
                let what = "\(outcome.outcome) (exit \(ExitStatus(error.code).rawValue))"
                return [outcome.name, what, "-", Formatting.fixed(outcome.seconds, digits: 1) + " s"]
            }
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

    private static func verification(_ result: DownloadResult) -> String {
        result.verification
    }

    /// `[2/5]`: the download's place in the list.
    private func tag(_ item: DownloadItem) -> String {
        "[\(item.id)/\(state.withLock { $0.count })]"
    }

    private func name(_ item: DownloadItem) -> String {
        state.withLock { $0.names[item.id] } ?? item.name
    }

    /// On a terminal, the totals of the running downloads, redrawn at most five times a second.
    private func showLiveLine() {
        guard isTerminal, !quiet else { return }
        let now = clock.now
        let text = state.withLock { state -> String? in
            if let last = state.lastLive, now - last < liveInterval { return nil }
            state.lastLive = now
            let progress = Array(state.running.values)
            let done = progress.reduce(Int64(0)) { $0 + $1.downloadedBytes }
            let speed = progress.reduce(0.0) { $0 + $1.bytesPerSecond }
            var text = "\(state.finished)/\(state.count) done, \(progress.count) running  \(Formatting.bytes(done))"
            var eta = ""
            if progress.allSatisfy({ $0.totalBytes != nil }) {
                let total = progress.reduce(Int64(0)) { $0 + ($1.totalBytes ?? 0) }
                text += "/" + Formatting.bytes(total)
                if speed > 0 { eta = "  ETA " + Formatting.duration(Double(max(0, total - done)) / speed) }
            }
            text += "  \(Formatting.bytes(Formatting.integer(speed)))/s" + eta
            text += "  \(progress.reduce(0) { $0 + $1.activeConnections }) conn"
            return text
        }
        if let text { statusLine.showLive(text) }
    }

    private func line(_ message: String, evenIfQuiet: Bool = false) {
        guard !quiet || evenIfQuiet else { return }
        statusLine.print(message)
    }
}
