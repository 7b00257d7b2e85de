import SystemPackage

/// Entry points into Braid's hot paths for the package-benchmark suites in `Benchmarks/`, which can only see
/// public symbols: the digest, the positional write path, and the segment scheduler, each driven the way the
/// engine drives it. Not API: `@_spi(Benchmarks) import Braid` to use it (`package` access would not reach
/// `Benchmarks/Package.swift`, a package of its own).
@_spi(Benchmarks)
public enum BenchmarkProbes {
    /// Digests `bytes` with OpenSSL's EVP, as the verifier does.
    public static func digest(_ algorithm: DigestAlgorithm, of bytes: UnsafeRawBufferPointer) -> [UInt8] {
        let hasher = Hasher(algorithm)
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Writes `total` bytes into a sparse partial file at `path` in `chunk`-sized positional writes, as the
    /// connections do; returns the number of writes.
    public static func writePartFile(at path: String, total: Int64, chunk: Int) throws -> Int {
        let file = try PartFile(path: FilePath(path), length: total)
        defer { file.close() }
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 4096)
        defer { block.deallocate() }
        block.initializeMemory(as: UInt8.self, repeating: 0x5A)
        var offset: Int64 = 0
        var writes = 0
        while offset < total {
            let count = Int(min(Int64(chunk), total - offset))
            try file.write(UnsafeRawBufferPointer(rebasing: block[0..<count]), at: offset)
            offset += Int64(count)
            writes += 1
        }
        return writes
    }

    /// Plans a file and runs the scheduler through a whole download with `connections` connections receiving
    /// `chunk` bytes per callback, idle connections stealing at the end; returns the scheduler events processed.
    public static func scheduleDownload(length: Int64, connections: Int, chunk: Int64) -> Int {
        var scheduler = SegmentScheduler(
            ranges: SegmentPlanner.plan(length: length, connections: connections),
            connectionLimit: connections
        )
        var working: [Int?] = Array(repeating: nil, count: connections)
        var events = 0
        while !scheduler.isComplete {
            for connection in 0..<connections where working[connection] == nil {
                working[connection] = scheduler.assign(connection: connection, now: 0)
                events += 1
            }
            for connection in 0..<connections {
                guard let segment = working[connection] else { continue }
                let left =
                    scheduler.segments[segment].end - scheduler.segments[segment].start
                    - scheduler.segments[segment].received
                let bytes = min(chunk, left)
                if bytes > 0 {
                    scheduler.received(segment: segment, bytes: bytes)
                    scheduler.flushed(segment: segment, bytes: bytes)
                    events += 2
                }
                if scheduler.segments[segment].received >= scheduler.segments[segment].end
                    - scheduler.segments[segment].start
                {
                    _ = scheduler.ended(segment: segment, failure: nil, now: 0, random: 0)
                    working[connection] = nil
                    events += 1
                }
            }
        }
        return events
    }
}
