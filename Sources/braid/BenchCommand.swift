import ArgumentParser
import Braid
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// `braid bench`: downloads a URL at several connection counts, in interleaved rounds, and recommends a count.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure throughput at several connection counts and recommend one.",
        discussion: """
            Each run downloads the resource (or its first --bytes) with the normal engine, one request per \
            connection, into a temporary sparse file that is deleted afterwards (--discard writes nothing). \
            Counts run in interleaved rounds (1,2,4,…,1,2,4,…) so that drift falls on all of them alike. The \
            recommendation is the smallest count whose median throughput is within 5 % of the best.
            """
    )

    @Argument(help: "The http or https URL to measure.")
    var url: String

    @Option(
        name: [.customShort("n"), .customLong("connections")],
        help: ArgumentHelp("Connection counts to compare, comma-separated (default 1,2,4,8,16).", valueName: "LIST"),
        transform: { text in
            do throws(BraidError) {
                return try BenchArgument.connectionCounts(text)
            } catch {
                throw error.validationError
            }
        }
    )
    var connectionList: [Int]?

    @Option(name: .customLong("repeat"), help: "Runs per connection count.")
    var repeats = 3

    @Option(
        help: ArgumentHelp("Fetch only the first LIMIT bytes per run (64M, 2G, …).", valueName: "LIMIT"),
        transform: { text in
            do throws(BraidError) {
                return try BenchArgument.byteCount(text)
            } catch {
                throw error.validationError
            }
        }
    )
    var bytes: Int64?

    @Flag(help: "Receive the bytes but write nothing (measures the network path alone).")
    var discard = false

    @Flag(help: "Print the report as one JSON document on stdout instead of the table.")
    var json = false

    @Flag(help: "Print one CSV row per run on stdout, as each run ends, instead of the table.")
    var csv = false

    @Option(help: ArgumentHelp("Write a chart of throughput against connections to FILE.", valueName: "FILE"))
    var svg: String?

    @Option(
        name: .customLong("temp-dir"),
        help: ArgumentHelp(
            "Put the temporary file in DIR (default: $TMPDIR or /tmp; mind a tmpfs).", valueName: "DIR"))
    var temporaryDirectory: String?

    @OptionGroup var request: RequestArguments

    @Flag(name: [.short, .long], help: "Print no progress or warnings on stderr, only the results and errors.")
    var quiet = false

    /// The connection counts asked for, or the default list.
    private var connections: [Int] { connectionList ?? [1, 2, 4, 8, 16] }

    func validate() throws {
        do throws(BraidError) {
            _ = try BenchSchedule(connectionCounts: connections, repeats: repeats)
            try baseOptions(directory: ".").validate()
        } catch {
            throw error.validationError
        }
        if json && csv { throw ValidationError("use either --json or --csv, not both") }
    }

    func run() async throws {
        try await withLogger(CommandLogger.make(verbosity: 0)) { _ in try await measure() }
    }

    private func measure() async throws {
        let schedule = try BenchSchedule(connectionCounts: connections, repeats: repeats)
        let progress = BenchProgress(quiet: quiet, runCount: schedule.runCount)
        if let warning = BenchAdvisory.connectionWarning(
            url: url, maximumConnections: schedule.connectionCounts.last ?? 1)
        {
            progress.warn(warning)
        }
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let runner = BenchRunner(baseOptions: baseOptions(directory: directory), url: url, progress: progress)
        let signals = SignalTrap { runner.stop() }
        defer { signals.cancel() }

        var runs: [BenchRun] = []
        do throws(BraidError) {
            let resource = try await runner.probe()
            if !resource.isSegmentable {
                progress.warn(
                    "warning: the server does not serve byte ranges with a known length: every run uses one "
                        + "connection, whatever the count")
            } else if let length = resource.length,
                let warning = BenchAdvisory.rangeWarning(
                    bytesPerRun: min(length, bytes ?? Int64.max), connectionCounts: schedule.connectionCounts)
            {
                progress.warn(warning)
            }
            let total = BenchAdvisory.totalBytes(
                length: resource.length, byteLimit: bytes, runs: schedule.runCount)
            if let total, let warning = BenchAdvisory.volumeWarning(url: url, totalBytes: total) {
                progress.warn(warning)
            }
            if csv { write(BenchReport.csvHeader + "\n") }
            for slot in schedule.slots {
                let run = try await runner.measure(slot)
                runs.append(run)
                if csv { write(BenchReport.csvRow(run) + "\n") }
            }
            progress.finish()
            try present(
                BenchReport(url: url, byteLimit: bytes, discardsData: discard, schedule: schedule, runs: runs),
                progress: progress
            )
        } catch {
            if error.code == .interrupted {
                // The engine's message speaks of resuming; a benchmark keeps nothing to resume from.
                progress.fail(
                    BraidError(.interrupted, "interrupted after \(runs.count) of \(schedule.runCount) runs"))
                if !runs.isEmpty && !csv {
                    presentPartial(
                        BenchReport(url: url, byteLimit: bytes, discardsData: discard, schedule: schedule, runs: runs))
                }
            } else {
                progress.fail(error)
            }
            if error.code == .interrupted, signals.caughtSignal == SIGTERM {
                throw ExitCode(128 + SIGTERM)
            }
            throw ExitCode(ExitStatus(error.code).rawValue)
        }
    }

    /// Prints the report in the form asked for, writes the chart, and says what is recommended and why.
    private func present(_ report: BenchReport, progress: BenchProgress) throws(BraidError) {
        if json {
            write(report.json() + "\n")
        } else if !csv {
            write(report.caption() + "\n\n" + report.table())
        }
        if let svg {
            do {
                try Data(report.svg().utf8).write(to: URL(fileURLWithPath: svg), options: .atomic)
            } catch {
                throw BraidError(.localIO, "cannot write the chart to \(svg): \(error)")
            }
        }
        guard let recommendation = report.recommendation else { return }
        let line = "Recommended: \(BenchFormat.connections(recommendation.connections)). \(recommendation.reason)"
        if json || csv {
            progress.warn(line)
        } else {
            write("\n" + line + "\n")
        }
        if let svg { progress.warn("Chart written to \(svg)") }
    }

    /// Prints what an interrupted benchmark measured, without a recommendation or chart: the counts not yet
    /// measured in every round would skew both.
    private func presentPartial(_ report: BenchReport) {
        if json {
            write(report.json() + "\n")
        } else {
            write(report.caption() + " (interrupted: these runs only)\n\n" + report.table(marksRecommendation: false))
        }
    }

    /// Writes `text` to stdout at once, unbuffered, so each CSV row appears as its run ends.
    private func write(_ text: String) {
        StandardStreams.output(text)
    }

    /// The options every run shares: one request per connection, fetch at most `--bytes`, never a final file.
    private func baseOptions(directory: String) -> DownloadOptions {
        var options = DownloadOptions()
        options.destination = .file(directory + "/bench")
        // One long request per connection is what a per-connection cap measures.
        options.piecesPerConnection = 1
        // A byte limit (the whole resource when none is given) makes every run a measurement: no manifest, no
        // digest, no final file, and the engine deletes its temporary file.
        options.byteLimit = bytes ?? Int64.max
        options.discardData = discard
        options.syncOnCompletion = false
        request.apply(to: &options)
        return options
    }

    private func makeTemporaryDirectory() throws(BraidError) -> String {
        let parent = temporaryDirectory ?? getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((parent + "/braid-bench-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw BraidError(
                .localIO, "cannot create a temporary directory in \(parent): \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }
}
