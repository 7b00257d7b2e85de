import Braid
import Dispatch
import Synchronization

/// Shows a download's progress on stderr: a live line on a terminal, a plain line every few seconds otherwise.
///
/// The first progress line comes one interval after the transfer starts, so a download that is over sooner shows
/// only its start and its end, never a line of zeros.
final class ProgressReporter: Sendable {
    private struct State {
        /// When the last progress line was shown, or the transfer started.
        var lastLine: Double = 0
        var path: String?
        var total: Int64?
    }

    private let quiet: Bool
    private let statusLine = StatusLine()
    private var isTerminal: Bool { statusLine.isTerminal }
    private let interval: Double
    private let state = Mutex(State())

    init(quiet: Bool) {
        self.quiet = quiet
        interval = statusLine.isTerminal ? 0.2 : 5
    }

    func handle(_ event: DownloadEvent) {
        guard !quiet else { return }
        switch event {
        case let .started(resource, path, resumed):
            state.withLock {
                $0.path = path
                $0.total = resource.length
                $0.lastLine = Self.now()
            }
            let size = resource.length.map(Formatting.bytes) ?? "unknown size"
            let mode = resource.isSegmentable ? "" : " (single stream: the server does not serve ranges)"
            let resuming = resumed > 0 ? ", resuming at \(Formatting.bytes(resumed))" : ""
            line("Downloading \(PrintableText.escapingControlCharacters(path)) (\(size)\(resuming))\(mode)")
        case let .progress(progress):
            let now = Self.now()
            let due = state.withLock { state -> Bool in
                guard now - state.lastLine >= interval else { return false }
                state.lastLine = now
                return true
            }
            if due { show(progress) }
        case let .retry(reason, delay):
            line("retrying in \(Formatting.fixed(delay, digits: 1)) s: \(reason)")
        case let .notice(message):
            line(message)
        case .state:
            break
        case let .completed(result) where !result.unmodified:
            line(Self.summary(of: result))
        case .completed:
            // The notice before it said the file is up to date; nothing was saved.
            break
        }
    }

    /// The last line of a download: what was saved, how long this run took, and the rate of the bytes this run
    /// fetched, not counting those an earlier run left on disk.
    private static func summary(of result: DownloadResult) -> String {
        let check = result.verification
        let path = PrintableText.escapingControlCharacters(result.path)
        let what: String
        if let extraction = result.extraction {
            let skipped = extraction.skipped > 0 ? ", \(extraction.skipped) already in place" : ""
            let kept = result.path.isEmpty ? "" : "; kept the archive as \(path)"
            what =
                "Unpacked \(extraction.written) entries into \(PrintableText.escapingControlCharacters(extraction.directory))"
                + "\(skipped) (archive \(Formatting.bytes(result.bytes)), \(check)\(kept))"
        } else if result.path.isEmpty {
            what = "Wrote \(Formatting.bytes(result.bytes)) to stdout (\(check))"
        } else {
            what = "Saved \(path) (\(Formatting.bytes(result.bytes)), \(check))"
        }
        let saved = what + " in \(Formatting.fixed(result.seconds, digits: 1)) s"
        guard result.fetchedBytes > 0 else { return saved + ", nothing fetched" }
        let speed = result.seconds > 0 ? Double(result.fetchedBytes) / result.seconds : 0
        let rate = "\(Formatting.bytes(Formatting.integer(speed)))/s"
        var settled = result.connections.map { ", settled on \($0) connection\($0 == 1 ? "" : "s") (-n auto)" } ?? ""
        if let peers = result.peerBytes {
            settled += ", \(Formatting.bytes(peers)) of it from cache peers"
        }
        guard result.resumedBytes > 0 else { return saved + ", " + rate + settled }
        return saved + ": \(Formatting.bytes(result.fetchedBytes)) fetched at \(rate), "
            + "\(Formatting.bytes(result.resumedBytes)) resumed" + settled
    }

    func warn(_ message: String) {
        line(message)
    }

    func fail(_ error: BraidError) {
        statusLine.print("braid: \(error.commandLineMessage())")
    }

    private func show(_ progress: DownloadProgress) {
        var text = ""
        if let fraction = progress.fraction {
            text += Formatting.padded(Formatting.fixed(fraction * 100, digits: 1), width: 5) + "% "
        }
        text += Formatting.bytes(progress.downloadedBytes)
        if let total = progress.totalBytes { text += "/" + Formatting.bytes(total) }
        text += "  \(Formatting.bytes(Formatting.integer(progress.bytesPerSecond)))/s"
        if let eta = progress.estimatedSecondsRemaining { text += "  ETA " + Formatting.duration(eta) }
        text += "  \(progress.activeConnections) conn"
        if let target = progress.targetConnections, target != progress.activeConnections { text += " (→\(target))" }
        if progress.retries > 0 { text += "  \(progress.retries) retries" }
        if let peers = progress.peerBytes { text += "  \(Formatting.bytes(peers)) from peers" }
        if isTerminal {
            text += "  [" + Self.segmentMap(progress, width: 24) + "]"
            statusLine.showLive(text)
        } else {
            statusLine.print(text)
        }
    }

    private static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }

    private func line(_ message: String) {
        guard !quiet else { return }
        statusLine.print(message)
    }

    /// One character per slice of the file: how full that slice is, from blank to a full block.
    static func segmentMap(_ progress: DownloadProgress, width: Int) -> String {
        guard let total = progress.totalBytes, total > 0 else { return String(repeating: "?", count: width) }
        let levels: [Character] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
        var cells = [Double](repeating: 0, count: width)
        let cellSize = Double(total) / Double(width)
        for segment in progress.segments {
            var start = Double(segment.start)
            let doneEnd = Double(segment.start + min(segment.doneBytes, segment.end - segment.start))
            while start < doneEnd {
                let cell = min(width - 1, Int(start / cellSize))
                let cellEnd = Double(cell + 1) * cellSize
                let piece = min(doneEnd, cellEnd) - start
                cells[cell] += piece / cellSize
                start += max(piece, 1)
            }
        }
        return String(cells.map { levels[min(8, max(0, Int(($0 * 8).rounded(.down))))] })
    }

}
