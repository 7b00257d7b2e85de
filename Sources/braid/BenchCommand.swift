import ArgumentParser
import Braid
import BraidBench
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
            Each run downloads the first --bytes of the resource (\(ByteLimit.standard) unless told otherwise, \
            all of it with --bytes all) with the normal engine, one request per connection, into a temporary \
            sparse file that is deleted afterwards (--discard writes nothing). \
            Counts run in interleaved rounds (1,2,4,…,1,2,4,…) so that drift falls on all of them alike. The \
            recommendation is the smallest count whose median throughput is within 5 % of the best.
            """
    )

    @Argument(help: "The http or https URL to measure.")
    var url: String

    @Option(
        name: [.customShort("n"), .customShort("x"), .customLong("connections")],
        help: ArgumentHelp(
            "Connection counts to compare, comma-separated (default "
                + BenchSchedule.defaultConnectionCounts.map(String.init).joined(separator: ",") + ").",
            valueName: "LIST"
        ),
        transform: { text in
            do throws(BraidError) {
                return try BenchArgument.connectionCounts(text)
            } catch {
                throw error.validationError
            }
        }
    )
    var connectionList: [Int]?

    @Option(name: .customLong("repeat"), help: ArgumentHelp("Runs per connection count.", valueName: "N"))
    var repeats = BenchSchedule.defaultRepeats

    @Option(
        help: ArgumentHelp(
            "Fetch the first LIMIT bytes per run (512K, 64M, 2G), or the whole resource with 'all' (default "
                + "\(ByteLimit.standard): the default \(BenchSchedule.defaultRunCount) runs take about a minute at "
                + "16 MiB/s).",
            valueName: "LIMIT"),
        transform: { text in
            do throws(BraidError) {
                return ByteLimit(limit: try BenchArgument.byteLimit(text))
            } catch {
                throw error.validationError
            }
        }
    )
    var bytes = ByteLimit.standard

    @Flag(help: "Receive the bytes but write nothing (measures the network path alone).")
    var discard = false

    @Flag(help: "Print the report as one JSON document on stdout instead of the table; the rest goes to stderr.")
    var json = false

    @Flag(help: "Print one CSV row per run on stdout, as each run ends, instead of the table; the rest to stderr.")
    var csv = false

    @Option(
        help: ArgumentHelp(
            "Write an SVG chart to FILE: median throughput per count with min-max bars, linear scaling for "
                + "reference, the recommendation marked.",
            valueName: "FILE"),
        completion: .file()
    )
    var svg: String?

    @Option(
        name: .customLong("temp-dir"),
        help: ArgumentHelp(
            "Put the temporary file in DIR (default: $TMPDIR or /tmp; mind a tmpfs).", valueName: "DIR"),
        completion: .directory
    )
    var temporaryDirectory: String?

    @OptionGroup var request: RequestArguments

    @Flag(name: [.short, .long], help: "Print no progress or warnings on stderr, only the results and errors.")
    var quiet = false

    @Flag(
        name: [.short, .long],
        help: "Log what Braid does to stderr: -v retries and restarts, -vv every request, -vvv libcurl's trace too."
    )
    var verbose: Int

    /// What to measure, from the arguments; throws a usage error for counts, repeats or a byte limit refused.
    private func benchConfiguration() throws(BraidError) -> BenchConfiguration {
        var options = DownloadOptions()
        request.apply(to: &options)
        options.verbose = verbose >= 3
        try options.validate()
        return try BenchConfiguration(
            url: url,
            connectionCounts: connectionList ?? BenchSchedule.defaultConnectionCounts,
            repeats: repeats,
            byteLimit: bytes.limit,
            discardsData: discard,
            requestOptions: options,
            temporaryParent: temporaryDirectory
        )
    }

    func validate() throws {
        do throws(BraidError) {
            _ = try benchConfiguration()
        } catch {
            throw error.validationError
        }
        if json && csv { throw ValidationError("use either --json or --csv, not both") }
    }

    func run() async throws {
        try await withLogger(CommandLogger.make(verbosity: verbose)) { _ in try await measure() }
    }

    private func measure() async throws {
        let configuration = try benchConfiguration()
        let progress = BenchProgress(quiet: quiet, runCount: configuration.schedule.runCount)
        let runner = BenchRunner(configuration: configuration, observer: Observer(progress: progress, csv: csv))
        let signals = SignalTrap { runner.stop() }
        defer { signals.cancel() }

        do throws(BenchFailure) {
            let report = try await runner.run()
            progress.finish()
            do throws(BraidError) {
                try present(report, progress: progress)
            } catch {
                throw BenchFailure(error: error)
            }
        } catch {
            progress.fail(error.error)
            if let partial = error.partialReport, !csv { presentPartial(partial) }
            if error.error.code == .interrupted, signals.caughtSignal == SIGTERM {
                throw ExitCode(128 + SIGTERM)
            }
            throw ExitCode(ExitStatus(error.error.code).rawValue)
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

    /// The bytes each run fetches, or nil for the whole resource, written as `--bytes` takes it.
    struct ByteLimit: CustomStringConvertible {
        var limit: Int64?

        /// What a run fetches unless told otherwise.
        static let standard = ByteLimit(limit: BenchConfiguration.defaultByteLimit)

        var description: String {
            guard let limit else { return "all" }
            for (unit, shift) in [("G", 30), ("M", 20), ("K", 10)] where limit % (1 << shift) == 0 {
                return "\(limit >> shift)\(unit)"
            }
            return String(limit)
        }
    }

    /// Where the runner's news goes: progress and warnings to stderr, and with `--csv` the header before the
    /// first run and each run's row as it ends to stdout.
    private struct Observer: BenchObserver {
        let progress: BenchProgress
        let csv: Bool

        func warn(_ message: String) {
            progress.warn(message)
        }

        func willMeasure(bytesPerRun: Int64?) {
            progress.expect(bytes: bytesPerRun)
            if csv { StandardStreams.output(BenchReport.csvHeader + "\n") }
        }

        func runStarted(_ slot: BenchSchedule.Slot) {
            progress.runStarted(slot)
        }

        func runEvent(_ event: DownloadEvent) {
            progress.handle(event)
        }

        func runFinished(_ run: BenchRun) {
            progress.runFinished(run)
            if csv { StandardStreams.output(BenchReport.csvRow(run) + "\n") }
        }
    }
}
