/// One measured download of a benchmark: what it fetched, how long it took and what it cost.
public struct BenchRun: Sendable, Equatable, Codable {
    /// The position of the run in the schedule, from 1.
    public var sequence: Int
    /// The round of the schedule the run belongs to, from 1.
    public var round: Int
    /// The connections the run was allowed.
    public var connections: Int
    /// Bytes of the resource the run delivered.
    public var bytes: Int64
    /// Wall time of the whole run, probe included, in seconds.
    public var seconds: Double
    /// `bytes / seconds`, the figure every statistic is made of.
    public var bytesPerSecond: Double
    /// Seconds from the start of the run to the first body byte, when any arrived.
    public var timeToFirstByte: Double?
    /// User plus system CPU time the process spent during the run, in seconds.
    public var cpuSeconds: Double
    /// Requests the engine retried during the run (refusals, dropped connections, `Retry-After`).
    public var retries: Int
    /// Body bytes received from the network, more than `bytes` when some were fetched twice.
    public var fetchedBytes: Int64

    /// A run of `slot` that delivered `bytes` in `seconds`; the throughput is derived from the two.
    public init(
        slot: BenchSchedule.Slot,
        bytes: Int64,
        seconds: Double,
        timeToFirstByte: Double?,
        cpuSeconds: Double,
        retries: Int,
        fetchedBytes: Int64
    ) {
        sequence = slot.sequence
        round = slot.round
        connections = slot.connections
        self.bytes = bytes
        self.seconds = seconds
        bytesPerSecond = seconds > 0 ? Double(bytes) / seconds : 0
        self.timeToFirstByte = timeToFirstByte
        self.cpuSeconds = cpuSeconds
        self.retries = retries
        self.fetchedBytes = fetchedBytes
    }
}
