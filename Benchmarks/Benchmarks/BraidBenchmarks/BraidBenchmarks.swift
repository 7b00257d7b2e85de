import Benchmark
@_spi(Benchmarks) import Braid

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Bytes (digest) or scheduler events (scheduler) per second of one measured call, timed around that call alone.
/// `throughput` counts whole iterations per second as an integer, too coarse for a call of a tenth of a second,
/// and `scalingFactor` only scales by powers of ten, so it cannot turn one 64 MiB digest into bytes.
let bytesPerSecond = BenchmarkMetric.custom("Bytes per second", polarity: .prefersLarger, useScalingFactor: false)
let eventsPerSecond = BenchmarkMetric.custom("Events per second", polarity: .prefersLarger, useScalingFactor: false)

let mebibyte = 1 << 20

/// Runs `body` and reports `count / elapsed seconds` as `metric`.
func measureRate<Result>(
    _ benchmark: Benchmark,
    _ metric: BenchmarkMetric,
    count: (Result) -> Int,
    _ body: () throws -> Result
) rethrows -> Result {
    let clock = ContinuousClock()
    let start = clock.now
    let result = try body()
    let elapsed = clock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    if seconds > 0 {
        benchmark.measurement(metric, Int((Double(count(result)) / seconds).rounded()))
    }
    return result
}

/// A path in the temporary directory, unique to this process.
func temporaryPartPath() -> String {
    let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    return "\(directory)/braid-benchmark-\(getpid()).part"
}

let benchmarks: @Sendable () -> Void = {
    // Digest: OpenSSL EVP over a 64 MiB buffer, as the verifier hashes a finished piece or file.
    let digestLength = 64 * mebibyte
    for algorithm in [DigestAlgorithm.md5, .sha256, .sha512] {
        Benchmark(
            "Digest \(algorithm) 64 MiB",
            configuration: .init(
                metrics: [.throughput, .wallClock, .cpuTotal, .mallocCountTotal, bytesPerSecond],
                warmupIterations: 1,
                maxDuration: .seconds(4),
                maxIterations: 20
            )
        ) { benchmark, buffer in
            let digest = measureRate(benchmark, bytesPerSecond, count: { _ in buffer.count }) {
                buffer.withUnsafeBytes { BenchmarkProbes.digest(algorithm, of: $0) }
            }
            blackHole(digest)
        } setup: {
            // Built per benchmark, not once for the suite, so that it is not in the other suites' resident memory.
            (0..<digestLength).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        }
    }

    // Write path: 256 MiB of positional writes into a sparse partial file, as the connections land their data.
    let writeTotal = Int64(256 * mebibyte)
    for chunkKiB in [16, 128, 512] {
        Benchmark(
            "Write part file 256 MiB in \(chunkKiB) KiB writes",
            configuration: .init(
                metrics: [.wallClock, .cpuTotal, .writeSyscalls, .peakMemoryResident],
                warmupIterations: 1,
                maxDuration: .seconds(6),
                maxIterations: 10
            )
        ) { benchmark in
            let path = temporaryPartPath()
            unlink(path)
            benchmark.startMeasurement()
            do {
                let writes = try BenchmarkProbes.writePartFile(at: path, total: writeTotal, chunk: chunkKiB * 1024)
                blackHole(writes)
            } catch {
                fatalError("writing \(path): \(error)")
            }
            benchmark.stopMeasurement()
            unlink(path)
        }
    }

    // Scheduler: a whole 4 GiB download driven through the segment scheduler, event by event, with no I/O.
    // One download takes a fraction of a millisecond, under the 10 ms tick of `cpuTotal`: an iteration runs a
    // thousand of them, and the scaled columns (`*`) show one download.
    for connections in [16, 64] {
        Benchmark(
            "Schedule 4 GiB over \(connections) connections, 128 KiB callbacks",
            configuration: .init(
                metrics: [.throughput, .wallClock, .cpuTotal, .mallocCountTotal, eventsPerSecond],
                warmupIterations: 1,
                scalingFactor: .kilo,
                maxDuration: .seconds(3),
                maxIterations: 10
            )
        ) { benchmark in
            let events = measureRate(benchmark, eventsPerSecond, count: { $0 }) {
                var events = 0
                for _ in benchmark.scaledIterations {
                    events += BenchmarkProbes.scheduleDownload(
                        length: 4 << 30,
                        connections: connections,
                        chunk: 128 << 10
                    )
                }
                return events
            }
            blackHole(events)
        }
    }
}
