import Braid
import BraidJSON
import Synchronization

/// What `--json` prints on stdout: newline-delimited JSON, one object per line, whose `event` field says what
/// happened. The schema is documented in `docs/manual/json.md`; each line's keys come in the order written there,
/// `event` first, and its numbers with three digits after the point.
///
/// Every line has `event` and `time` (seconds since the command started); every line about one download has its
/// `id` (its position in the list, 1 for a single URL) and `url`. `progress` is written about once a second per
/// download (`--progress-interval`). A download's last lines are `verified` then `done` (`done` alone for a file
/// left as it was because the server's is not newer), or `error`; a list's last line is `summary`.
final class JSONEventWriter: ListObserver {
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private let progressInterval: Duration
    /// When each download's last `progress` line was written; held while writing, so lines never interleave.
    private let lastProgress = Mutex<[Int: ContinuousClock.Instant]>([:])
    /// Whether the downloads are a list's entries, which errors then name with `out=` rather than `-o`.
    private let inList: Bool

    /// - Parameter progressInterval: the least time between two `progress` lines of one download.
    init(inList: Bool, progressInterval: Duration = .seconds(1)) {
        start = clock.now
        self.inList = inList
        self.progressInterval = progressInterval
    }

    /// A message that is not about one download, such as the `--insecure` warning.
    func notice(_ message: String) {
        write("notice", [("message", .string(message))])
    }

    /// The command could not run at all (an unreadable or malformed list): the last line.
    func failed(_ error: BraidError) {
        write("error", describe(error))
    }

    func listStarted(_ items: [DownloadItem], limits: DownloadManager.Limits, directory: String) {
        for item in items {
            write("state", Self.identify(item) + [("state", .string(DownloadState.queued.rawValue))])
        }
    }

    /// Each state and each verified result is a line of its own.
    var readsStates: Bool { true }

    func handle(_ event: DownloadEvent, of item: DownloadItem) {
        let id = Self.identify(item)
        switch event {
        case let .state(state):
            write("state", id + [("state", .string(state.rawValue))])
        case let .started(resource, path, resumedBytes):
            write(
                "start",
                id + [
                    ("path", .string(path)),
                    ("total", .integer(resource.length)),
                    ("resumed", .integer(resumedBytes)),
                    ("segmented", .bool(resource.isSegmentable)),
                ]
            )
        case let .progress(progress):
            writeProgress(progress, id: id, of: item)
        case let .retry(reason, delay):
            write("retry", id + [("reason", .string(reason)), ("delay", .number(delay))])
        case let .notice(message):
            write("notice", id + [("message", .string(message))])
        case .completed:
            // `verified` and `done` come from `finished(_:)`, after the download's final `state` line.
            break
        }
    }

    func finished(_ outcome: DownloadOutcome) {
        let id = Self.identify(outcome.item)
        switch outcome.result {
        case let .success(result):
            let digest = result.verifiedDigest
            // A file left as it was (-N) was not verified: it was compared by date.
            if !result.unmodified {
                write(
                    "verified",
                    id + [
                        ("path", .string(result.path)),
                        (
                            "algorithm",
                            .string(
                                digest.map { "\($0.algorithm)" } ?? result.verifiedPieces.map { "\($0.algorithm)" }
                                    ?? "length")
                        ),
                        ("hex", .string(digest?.hex)),
                        ("source", .string(digest?.source.rawValue ?? result.verifiedPieces.map { _ in "pieces" })),
                        ("pieces", result.verifiedPieces.map { .integer(Int64($0.count)) } ?? .null),
                        ("bytes", .integer(result.bytes)),
                    ]
                )
            }
            write(
                "done",
                id + [
                    ("path", .string(result.path)),
                    ("bytes", .integer(result.bytes)),
                    ("resumed", .integer(result.resumedBytes)),
                    ("fetched", .integer(result.fetchedBytes)),
                    ("retries", .integer(Int64(result.retries))),
                    ("seconds", .number(result.seconds)),
                    ("skipped", .bool(outcome.skipped)),
                    ("unmodified", .bool(result.unmodified)),
                    // The count -n auto settled on; null for a fixed count.
                    ("connections", .integer(result.connections.map(Int64.init))),
                    // The ranges a repair pass rewrote; null without one (--repair).
                    ("repaired", Self.ranges(result.repairedRanges)),
                    // Of `fetched`, the bytes cache peers sent; null without --cache-peers.
                    ("peers", .integer(result.peerBytes)),
                ]
            )
        case let .failure(error):
            write("error", id + [("path", .string(outcome.path))] + describe(error))
        }
        lastProgress.withLock { $0[outcome.item.id] = nil }
    }

    func listFinished(_ outcomes: [DownloadOutcome.Summary], status: Int32, seconds: Double) {
        let files: [JSON] = outcomes.map { outcome in
            var fields =
                Self.identify(outcome.item) + [
                    ("path", .string(outcome.path)),
                    ("outcome", .string(outcome.outcome)),
                ]
            if let error = outcome.error {
                fields += [("seconds", .number(outcome.seconds))] + describe(error)
            } else {
                fields += [("bytes", .integer(outcome.bytes)), ("seconds", .number(outcome.seconds))]
            }
            return .object(fields)
        }
        let failed = outcomes.filter { $0.error != nil }.count
        write(
            "summary",
            [
                ("downloads", .integer(Int64(outcomes.count))),
                ("succeeded", .integer(Int64(outcomes.count - failed))),
                ("failed", .integer(Int64(failed))),
                ("exit", .integer(Int64(status))),
                ("seconds", .number(seconds)),
                ("files", .array(files)),
            ]
        )
    }

    private func writeProgress(_ progress: DownloadProgress, id: [(String, JSON)], of item: DownloadItem) {
        let now = clock.now
        let due = lastProgress.withLock { last in
            if let previous = last[item.id], now - previous < progressInterval { return false }
            last[item.id] = now
            return true
        }
        guard due else { return }
        let segments: [JSON] = progress.segments.map { segment in
            .object([
                ("start", .integer(segment.start)),
                // A stream of unknown length has no end yet.
                ("end", segment.end == Int64.max ? .null : .integer(segment.end)),
                ("done", .integer(segment.doneBytes)),
                ("active", .bool(segment.isActive)),
            ])
        }
        // With -n auto: the count it aims for now, and why.
        let adaptive: [(String, JSON)] =
            progress.targetConnections.map { target in
                [("target", .integer(Int64(target))), ("reason", .string(progress.connectionsReason))]
            } ?? []
        // With --cache-peers: the bytes they sent in this run, and those the origin and its mirrors sent.
        let peers: [(String, JSON)] =
            progress.peerBytes.map { peers in
                [("peers", .integer(peers)), ("origin", .integer(progress.originBytes))]
            } ?? []
        write(
            "progress",
            id + [
                ("downloaded", .integer(progress.downloadedBytes)),
                ("total", .integer(progress.totalBytes)),
                ("speed", .integer(Formatting.integer(progress.bytesPerSecond))),
                ("eta", .number(progress.estimatedSecondsRemaining)),
                ("connections", .integer(Int64(progress.activeConnections))),
                ("retries", .integer(Int64(progress.retries))),
            ] + adaptive + peers + [("segments", .array(segments))]
        )
    }

    private func write(_ event: String, _ fields: [(String, JSON)]) {
        // Under the lock, so that lines written by different downloads' tasks never interleave and their times
        // never go backwards.
        lastProgress.withLock { _ in
            let time = (clock.now - start).seconds
            let line = JSON.object([("event", .string(event)), ("time", .number(time))] + fields)
            StandardStreams.output(line.text(numbers: .fixed(digits: 3)) + "\n")
        }
    }

    private static func identify(_ item: DownloadItem) -> [(String, JSON)] {
        [("id", .integer(Int64(item.id))), ("url", .string(PrintableText.sanitised(item.url)))]
    }

    /// Byte ranges as `[{"offset": …, "length": …}, …]`, or `null` for nil.
    private static func ranges(_ ranges: [Range<Int64>]?) -> JSON {
        guard let ranges else { return .null }
        return .array(
            ranges.map { .object([("offset", .integer($0.lowerBound)), ("length", .integer(Int64($0.count)))]) })
    }

    private func describe(_ error: BraidError) -> [(String, JSON)] {
        [
            ("code", .string(error.code.description)),
            ("exit", .integer(Int64(ExitStatus(error.code).rawValue))),
            ("http", .integer(error.httpStatus.map(Int64.init))),
            ("message", .string(error.commandLineMessage(inList: inList))),
        ]
    }
}
