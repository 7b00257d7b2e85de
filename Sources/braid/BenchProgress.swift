import Braid
import BraidBench
import Dispatch
import Synchronization

/// Shows a benchmark's progress on stderr: a live line on a terminal, one plain line per finished run otherwise.
final class BenchProgress: Sendable {
    private struct State {
        var slot: BenchSchedule.Slot?
        var expectedBytes: Int64?
        var lastLine: Double = 0
    }

    private let quiet: Bool
    private let statusLine = StatusLine()
    private var isTerminal: Bool { statusLine.isTerminal }
    private let runCount: Int
    private let state = Mutex(State())

    /// A reporter for a schedule of `runCount` runs; `quiet` silences everything but errors.
    init(quiet: Bool, runCount: Int) {
        self.quiet = quiet
        self.runCount = runCount
    }

    /// Sets the bytes each run fetches, once the probe knows them, so the live line can show a percentage.
    func expect(bytes: Int64?) {
        state.withLock { $0.expectedBytes = bytes }
    }

    /// A run is about to start.
    func runStarted(_ slot: BenchSchedule.Slot) {
        state.withLock {
            $0.slot = slot
            $0.lastLine = 0
        }
        if isTerminal { live(prefix(slot) + "starting") }
    }

    /// An event of the running download.
    func handle(_ event: DownloadEvent) {
        guard !quiet else { return }
        switch event {
        case let .progress(progress):
            guard isTerminal else { return }
            let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
            let (due, slot, expected) = state.withLock { state in
                let due = now - state.lastLine >= 0.2
                if due { state.lastLine = now }
                return (due, state.slot, state.expectedBytes)
            }
            guard due, let slot else { return }
            var text = prefix(slot)
            if let expected, expected > 0 {
                let percent = min(1, Double(progress.downloadedBytes) / Double(expected)) * 100
                text += Formatting.padded(Formatting.fixed(percent, digits: 0), width: 3) + "%  "
            }
            text += "\(BenchFormat.bytes(progress.downloadedBytes))  \(BenchFormat.rate(progress.bytesPerSecond))"
            if progress.retries > 0 { text += "  \(progress.retries) retries" }
            live(text)
        case let .notice(message):
            line(message)
        case .started, .retry, .state, .completed:
            break
        }
    }

    /// A run finished: off a terminal, say how it went.
    func runFinished(_ run: BenchRun) {
        guard !isTerminal else { return }
        var text =
            "run \(run.sequence)/\(runCount): \(BenchFormat.connections(run.connections)), "
            + "\(BenchFormat.bytes(run.bytes)) in \(BenchFormat.seconds(run.seconds)), "
            + BenchFormat.rate(run.bytesPerSecond)
        if run.retries > 0 { text += ", \(run.retries) retries" }
        line(text)
    }

    /// Every run is done: clears the live line.
    func finish() {
        statusLine.clear()
    }

    /// A warning or remark on its own line.
    func warn(_ message: String) {
        line(message)
    }

    /// The error that ended the benchmark, always shown.
    func fail(_ error: BraidError) {
        statusLine.print("braid: \(error.commandLineMessage())")
    }

    private func prefix(_ slot: BenchSchedule.Slot) -> String {
        "run \(slot.sequence)/\(runCount)  \(BenchFormat.connections(slot.connections))  "
    }

    private func live(_ text: String) {
        guard !quiet else { return }
        statusLine.showLive(text)
    }

    private func line(_ message: String) {
        guard !quiet else { return }
        statusLine.print(message)
    }
}
