import Braid
import BraidBench
import Synchronization

/// Performs the downloads of a benchmark one after another, timing each, and stops the running one on request.
final class BenchRunner: Sendable {
    private struct State {
        var current: Download?
        var stopped = false
    }

    private let baseOptions: DownloadOptions
    private let url: String
    private let progress: BenchProgress
    private let state = Mutex(State())

    /// A runner of downloads of `url` with `baseOptions`, reporting to `progress`.
    init(baseOptions: DownloadOptions, url: String, progress: BenchProgress) {
        self.baseOptions = baseOptions
        self.url = url
        self.progress = progress
    }

    /// Stops the download in progress and refuses further ones: each then throws `.interrupted`.
    func stop() {
        let current = state.withLock { state -> Download? in
            state.stopped = true
            return state.current
        }
        current?.interrupt()
    }

    /// Fetches one byte over one connection, untimed: learns the length and whether ranges are served, and
    /// warms up name resolution and the server before the first measured run.
    func probe() async throws(BraidError) -> RemoteResource {
        var options = baseOptions
        options.connections = 1
        options.byteLimit = 1
        options.discardData = true
        let download = Download(url: url, options: options)
        let started = Task { [events = download.events] () -> RemoteResource? in
            var resource: RemoteResource?
            for await event in events {
                if case let .started(found, _, _) = event, resource == nil { resource = found }
            }
            return resource
        }
        _ = try await perform(download)
        guard let resource = await started.value else {
            throw BraidError(.protocolViolation, "the probe of \(url) finished without describing the resource")
        }
        progress.expect(bytes: min(resource.length ?? Int64.max, baseOptions.byteLimit ?? Int64.max))
        return resource
    }

    /// Downloads once with `slot`'s connection count and measures it.
    func measure(_ slot: BenchSchedule.Slot) async throws(BraidError) -> BenchRun {
        var options = baseOptions
        options.connections = slot.connections
        let download = Download(url: url, options: options)
        progress.runStarted(slot)
        let reporting = Task { [events = download.events, progress] in
            for await event in events { progress.handle(event) }
        }
        let cpuBefore = BenchCPUTime.now()
        let result: DownloadResult
        do {
            result = try await perform(download)
        } catch {
            await reporting.value
            throw error
        }
        let cpuSeconds = BenchCPUTime.now() - cpuBefore
        await reporting.value
        let run = BenchRun(
            slot: slot,
            bytes: result.bytes,
            seconds: result.seconds,
            timeToFirstByte: result.timeToFirstByte,
            cpuSeconds: cpuSeconds,
            retries: result.retries,
            fetchedBytes: result.fetchedBytes
        )
        progress.runFinished(run)
        return run
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
