import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The pools a `DownloadManager`'s downloads run on: one per lane, each with its thread, its multi handle and its
/// share of the manager's connection caps, so that together they hold the caps as one pool would.
///
/// One pool's thread receives every byte of every download on it: on a fast link a list's large file then took that
/// thread whole, and the small files behind it waited (on loopback, four 64 MiB files and a thousand of 64 KiB took
/// the time of both one after the other). Two lanes receive on two cores. A download takes its lane as it starts
/// (`enter()`): the one running the fewest downloads, the first of equals, so that downloads one at a time (`-j 1`)
/// all run on the first lane and reuse its connections, and many at once spread over both.
///
/// Connections are reused within a lane, not across: over HTTP/2 a list opens one connection per lane. A lane holds
/// half the caps, so one download alone in a manager gets at most half the per-host cap (8 of the default 16,
/// which is also a download's default count). A manager whose per-host cap is under 8, or a machine with one core,
/// has one lane. See [the many-downloads note](../../../docs/design/many-downloads.md#lanes).
///
/// Each lane has a second pool for the segments of a file fetched over several connections from a server that
/// would multiplex them (`DownloadJob.spreadsSegments`): over HTTP/1.1, one connection each, as a download on its own
/// fetches them, so that a cap the server or the network puts on each connection applies to each segment. They need
/// a multi handle of their own: libcurl 7.88 must not have requests of both versions to one host on one (see
/// `TransferEngine.init`). It is made as a download first spreads there, and shut down when the lane gives each of its
/// requests a connection (`SegmentPool`); its connections count against the lane's budget as the others do.
///
/// A lane's pool learns whether its requests receive faster on connections of their own than as streams of one
/// (`StreamsPerConnection`), behind a cap on each connection; it gives them one each only while no download spreads
/// its segments on the second pool, and no download spreads there while it does, so that the caps hold either way.
final class PoolLanes: Sendable {
    /// A pool and the connections its downloads may hold.
    struct Lane: Sendable {
        let index: Int
        let pool: TransferPool
        /// Where the lane's downloads that spread their segments over connections of their own fetch them, over
        /// HTTP/1.1, unless the lane gives each of its requests a connection (`SegmentPool`).
        let segments: SegmentPool
        let budget: ConnectionBudget
    }

    let lanes: [Lane]
    /// Downloads running on each lane.
    private let running: Mutex<[Int]>

    /// Lanes for `maximumConnections` in all and `maximumPerHost` to any one host, split between them.
    ///
    /// - Parameter logger: where each lane's pool tells what it learned (`TransferPool.init`), the lane's number in
    ///   its metadata.
    init(
        maximumConnections: Int, maximumPerHost: Int, lanes requested: Int? = nil,
        logger: Logger = Logger(label: "braid", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        let count = max(
            1, requested ?? Self.defaultCount(maximumPerHost: maximumPerHost, maximumConnections: maximumConnections))
        func share(_ cap: Int, _ index: Int) -> Int { max(1, cap / count + (index < cap % count ? 1 : 0)) }
        lanes = (0..<count).map { index -> Lane in
            let (perHost, total) = (share(maximumPerHost, index), share(maximumConnections, index))
            // One fewer, idle ones included, as its downloads hold one fewer in the budget: room for the
            // connection the lane's pool keeps to the host.
            let segments = SegmentPool(
                limits: TransferPool.Limits(
                    maximumConnectionsPerHost: max(1, perHost - 1), maximumConnections: max(1, total - 1)))
            // Giving each request a connection needs room for more than one.
            let mayCarry: @Sendable (Int) -> Bool = { [segments] limit in segments.laneMayCarry(limit) }
            var laneLogger = logger
            laneLogger[metadataKey: "braid.lane"] = "\(index)"
            let pool = TransferPool(
                limits: TransferPool.Limits(maximumConnectionsPerHost: perHost, maximumConnections: total),
                learningStreams: min(perHost, total) >= 2 ? mayCarry : nil, logger: laneLogger)
            return Lane(
                index: index, pool: pool, segments: segments,
                budget: ConnectionBudget(maximumConnections: total, maximumPerHost: perHost))
        }
        running = Mutex(Array(repeating: 0, count: count))
    }

    /// Two lanes where there are two cores to receive on and caps of at least 8 to split; else one.
    static func defaultCount(maximumPerHost: Int, maximumConnections: Int) -> Int {
        let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        return cores >= 2 && maximumPerHost >= 8 && maximumConnections >= 8 ? 2 : 1
    }

    /// The lane for a download starting now; give it back with `leave(_:)` when the download ends.
    func enter() -> Lane {
        let index = running.withLock { running in
            let index = running.indices.min { running[$0] < running[$1] } ?? 0
            running[index] += 1
            return index
        }
        return lanes[index]
    }

    func leave(_ lane: Lane) {
        running.withLock { $0[lane.index] -= 1 }
    }

    /// Connections in use now across the lanes.
    var connectionsInUse: Int { lanes.reduce(0) { $0 + $1.budget.inUse } }
}
