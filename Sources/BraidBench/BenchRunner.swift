import Braid
import Synchronization

/// Performs a benchmark: probes the URL, warns of what would make the numbers misleading or the load unwelcome,
/// then downloads the resource once per slot of the schedule, one after another, timing each run, and stops the
/// running download on request.
public final class BenchRunner: Sendable {
    private struct State {
        var current: Download?
        var stopped = false
    }

    /// What the engine reported of one benchmark download, and the CPU time it cost.
    struct Measurement: Sendable {
        /// The resource as the download's `started` event described it, if it got that far.
        var resource: RemoteResource?
        /// Bytes of the resource delivered.
        var bytes: Int64
        /// Wall time of the whole download, in seconds.
        var seconds: Double
        /// Seconds to the first body byte, when any arrived.
        var timeToFirstByte: Double?
        /// User plus system CPU seconds of the process during the download.
        var cpuSeconds: Double
        /// Requests retried.
        var retries: Int
        /// Body bytes received from the network.
        var fetchedBytes: Int64
    }

    private let configuration: BenchConfiguration
    private let observer: any BenchObserver
    private let state = Mutex(State())

    /// A runner of `configuration` telling `observer` how it goes; nothing happens until ``run()``.
    public init(configuration: BenchConfiguration, observer: any BenchObserver) {
        self.configuration = configuration
        self.observer = observer
    }

    /// Stops the download in progress and refuses further ones: ``run()`` then fails with `.interrupted`.
    public func stop() {
        let current = state.withLock { state -> Download? in
            state.stopped = true
            return state.current
        }
        current?.interrupt()
    }

    /// Runs the whole benchmark in a temporary directory it removes afterwards, and returns the report.
    ///
    /// Throws a ``BenchFailure`` with the first error of any run; after an interruption it holds the report of
    /// the runs done so far.
    public func run() async throws(BenchFailure) -> BenchReport {
        let schedule = configuration.schedule
        if let warning = BenchAdvisory.connectionWarning(
            url: configuration.url, maximumConnections: schedule.connectionCounts.last ?? 1)
        {
            observer.warn(warning)
        }
        let directory: String
        do throws(BraidError) {
            directory = try BenchTemporaryDirectory.make(in: configuration.temporaryParent)
        } catch {
            throw BenchFailure(error: error)
        }
        defer { BenchTemporaryDirectory.remove(directory) }

        var runs: [BenchRun] = []
        var byteLimit = configuration.byteLimit
        do throws(BraidError) {
            let resource = try await probe(directory: directory)
            byteLimit = Self.byteLimit(configuration.byteLimit, length: resource.length)
            for slot in schedule.slots {
                runs.append(try await run(slot, directory: directory))
            }
        } catch {
            guard error.code == .interrupted else { throw BenchFailure(error: error) }
            // The engine's message speaks of resuming; a benchmark keeps nothing to resume from.
            throw BenchFailure(
                error: BraidError(.interrupted, "interrupted after \(runs.count) of \(schedule.runCount) runs"),
                partialReport: runs.isEmpty ? nil : report(runs, byteLimit: byteLimit)
            )
        }
        return report(runs, byteLimit: byteLimit)
    }

    /// The byte limit that applies to a resource of `length` bytes: `nil` (the whole resource) when the resource
    /// is no longer than `limit`, so that a report never speaks of "the first 64 MiB" of a 16 MiB file.
    static func byteLimit(_ limit: Int64?, length: Int64?) -> Int64? {
        guard let limit, let length else { return limit }
        return length <= limit ? nil : limit
    }

    /// The report of `runs`, each of which fetched at most `byteLimit` bytes.
    private func report(_ runs: [BenchRun], byteLimit: Int64?) -> BenchReport {
        BenchReport(
            url: configuration.url,
            byteLimit: byteLimit,
            discardsData: configuration.discardsData,
            schedule: configuration.schedule,
            runs: runs
        )
    }

    /// Fetches one byte over one connection, untimed: learns the length and whether ranges are served, and
    /// warms up name resolution and the server before the first measured run. Then warns of what the resource
    /// makes of the schedule, and tells the observer the runs are about to start. Returns the resource.
    private func probe(directory: String) async throws(BraidError) -> RemoteResource {
        let measurement = try await measure(
            url: configuration.url, connections: 1, bytes: 1, discard: true, directory: directory)
        guard let resource = measurement.resource else {
            throw BraidError(
                .protocolViolation, "the probe of \(configuration.url) finished without describing the resource")
        }
        let schedule = configuration.schedule
        let byteLimit = configuration.byteLimit
        if !resource.isSegmentable {
            observer.warn(
                "warning: the server does not serve byte ranges with a known length: every run uses one "
                    + "connection, whatever the count")
        } else if let length = resource.length,
            let warning = BenchAdvisory.rangeWarning(
                bytesPerRun: min(length, byteLimit ?? Int64.max), connectionCounts: schedule.connectionCounts)
        {
            observer.warn(warning)
        }
        let total = BenchAdvisory.totalBytes(length: resource.length, byteLimit: byteLimit, runs: schedule.runCount)
        if let total, let warning = BenchAdvisory.volumeWarning(url: configuration.url, totalBytes: total) {
            observer.warn(warning)
        }
        observer.willMeasure(bytesPerRun: [resource.length, byteLimit].compactMap { $0 }.min())
        return resource
    }

    /// Downloads once with `slot`'s connection count and measures it.
    private func run(_ slot: BenchSchedule.Slot, directory: String) async throws(BraidError) -> BenchRun {
        observer.runStarted(slot)
        let measurement = try await measure(
            url: configuration.url,
            connections: slot.connections,
            bytes: configuration.byteLimit,
            discard: configuration.discardsData,
            directory: directory,
            events: { [observer] event in observer.runEvent(event) }
        )
        let run = BenchRun(
            slot: slot,
            bytes: measurement.bytes,
            seconds: measurement.seconds,
            timeToFirstByte: measurement.timeToFirstByte,
            cpuSeconds: measurement.cpuSeconds,
            retries: measurement.retries,
            fetchedBytes: measurement.fetchedBytes
        )
        observer.runFinished(run)
        return run
    }

    /// The one way a benchmark downloads, probe and measured runs alike: `url` over `connections` connections,
    /// one request each, fetching its first `bytes` bytes (the whole resource when `nil`) into a sparse temporary
    /// file in `directory`, or writing nothing when `discard` is true. `events` sees the download's events.
    ///
    /// The only place bench code sets `DownloadOptions.byteLimit` and `discardData`: a byte limit makes the
    /// download a measurement, with no manifest, no digest and no final file, and the engine deletes its
    /// temporary file.
    func measure(
        url: String,
        connections: Int,
        bytes: Int64?,
        discard: Bool,
        directory: String,
        events: (@Sendable (DownloadEvent) -> Void)? = nil
    ) async throws(BraidError) -> Measurement {
        var options = configuration.requestOptions
        options.destination = .file(directory + "/bench")
        options.connections = connections
        // One long request per connection is what a per-connection cap measures.
        options.piecesPerConnection = 1
        options.byteLimit = bytes ?? Int64.max
        options.discardData = discard
        options.syncOnCompletion = false
        let download = Download(url: url, options: options)
        let watching = Task { [stream = download.events] () -> RemoteResource? in
            var resource: RemoteResource?
            for await event in stream {
                if case let .started(found, _, _) = event, resource == nil { resource = found }
                events?(event)
            }
            return resource
        }
        let cpuBefore = BenchCPUTime.now()
        let result: DownloadResult
        do {
            result = try await perform(download)
        } catch {
            _ = await watching.value
            throw error
        }
        let cpuSeconds = BenchCPUTime.now() - cpuBefore
        return Measurement(
            resource: await watching.value,
            bytes: result.bytes,
            seconds: result.seconds,
            timeToFirstByte: result.timeToFirstByte,
            cpuSeconds: cpuSeconds,
            retries: result.retries,
            fetchedBytes: result.fetchedBytes
        )
    }

    /// Runs `download` as the current one, unless a stop came first.
    private func perform(_ download: Download) async throws(BraidError) -> DownloadResult {
        let stopped = state.withLock { state -> Bool in
            if !state.stopped { state.current = download }
            return state.stopped
        }
        guard !stopped else { throw BraidError(.interrupted, "interrupted.") }
        defer { state.withLock { $0.current = nil } }
        return try await download.run()
    }
}
