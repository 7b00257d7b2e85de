import BraidBench

/// Synthetic benchmark runs for the tests of the pure bench types: no network, exact numbers.
enum BenchTestRuns {
    static let bytes: Int64 = 64 << 20

    /// A run of `connections` connections at `bytesPerSecond`, at position `sequence` of round `round`.
    static func run(_ connections: Int, _ bytesPerSecond: Double, sequence: Int = 1, round: Int = 1) -> BenchRun {
        BenchRun(
            slot: .init(sequence: sequence, round: round, connections: connections),
            bytes: bytes,
            seconds: Double(bytes) / bytesPerSecond,
            timeToFirstByte: 0.002,
            cpuSeconds: 0.05 * Double(connections),
            retries: connections == 16 ? 1 : 0,
            fetchedBytes: bytes
        )
    }

    /// A report of `rounds` rounds over `medians`, each count's runs at 0.9, 1 and 1.1 times its median (in that
    /// order, round by round), performed in the interleaved order of its schedule.
    static func report(medians: [Int: Double], rounds: Int = 3) throws -> BenchReport {
        let schedule = try BenchSchedule(connectionCounts: Array(medians.keys), repeats: rounds)
        let factors = [0.9, 1.0, 1.1]
        let runs = schedule.slots.map { slot in
            run(
                slot.connections,
                medians[slot.connections, default: 0] * factors[(slot.round - 1) % factors.count],
                sequence: slot.sequence,
                round: slot.round
            )
        }
        return BenchReport(
            url: "http://127.0.0.1:8080/f", byteLimit: bytes, discardsData: false, schedule: schedule, runs: runs)
    }
}
