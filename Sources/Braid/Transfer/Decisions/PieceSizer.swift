/// How much one request may fetch, from what a request costs: the server's time to a first byte, and the bytes a
/// connection receives a second meanwhile. A pure value inside `TransferMachine` (for a fixed count) and inside
/// `ConnectionPolicy` (for `-n auto`), fed first bytes and samples with the time, and tested without a network.
///
/// Why pieces are sized so: `docs/design/transfer.md#piece-sizes`.
struct PieceSizer: Equatable, Sendable {
    /// How many times what a connection receives while it waits for a first byte one request may fetch: the wait is
    /// then a twentieth of the request's time.
    static let waitsPerPiece = 20.0
    /// A time to first byte that makes requests costly before any connection's rate is measured: at 2.5 MiB/s a
    /// connection (slower than most links), a twentieth of a mebibyte waits for it.
    static let slowFirstByte = 0.02

    /// How much one request may fetch when requests are costly: about `waitsPerPiece` times what a connection
    /// receives while it waits for a first byte. It only grows, and stays nil while requests are cheap (below
    /// 1 MiB).
    private(set) var pieceBytes: Int64?
    /// The last requests' times to first byte.
    private var recentFirstBytes: [Double] = []
    /// The previous sample, and the bytes a second one connection received since, smoothed.
    private var lastSample: Sample?
    private(set) var perConnectionRate: Double?

    private struct Sample: Equatable, Sendable {
        var time: Double
        var bytes: Int64
        var active: Int
    }

    /// The time to a first byte lately (the quickest of the last requests': what a request costs at least, not a
    /// moment of load, nor the handshakes of new connections), or nil before any.
    var typicalFirstByte: Double? { recentFirstBytes.min() }

    /// Whether a first byte came and a connection's rate was sampled: until then, nothing tells what a request costs.
    var hasMeasured: Bool { !recentFirstBytes.isEmpty && perConnectionRate != nil }

    /// A request's first byte came `seconds` after it was sent (connecting not counted).
    mutating func firstByte(after seconds: Double) {
        recentFirstBytes.append(seconds)
        if recentFirstBytes.count > 32 { recentFirstBytes.removeFirst() }
    }

    /// The fewest seconds a connection's rate is measured over: samples come as bytes do, and a rate taken over a
    /// moment that a burst just ended would say a connection receives more than it does.
    static let sampleInterval = 0.05

    /// Time passed: `receivedTotal` bytes have arrived so far over `active` connections. Grows `pieceBytes` from the
    /// recent times to first byte and what a connection receives a second, from the first samples on: a costly
    /// server is found out within the first requests. A rate is taken only over a stretch of at least
    /// `sampleInterval` throughout which as many connections ran: one that began receiving half-way would make
    /// each look slower.
    mutating func sample(now: Double, receivedTotal: Int64, active: Int) {
        guard let lastSample, lastSample.active == active else {
            lastSample = Sample(time: now, bytes: receivedTotal, active: active)
            return
        }
        guard now >= lastSample.time + Self.sampleInterval else { return }
        self.lastSample = Sample(time: now, bytes: receivedTotal, active: active)
        guard active > 0 else { return }
        let rate = Double(receivedTotal - lastSample.bytes) / (now - lastSample.time) / Double(active)
        guard rate > 0 else { return }
        let smoothed = perConnectionRate.map { ($0 + rate) / 2 } ?? rate
        perConnectionRate = smoothed
        guard let firstByte = typicalFirstByte else { return }
        let piece = smoothed * firstByte * Self.waitsPerPiece
        if piece >= Double(1 << 20), piece < 0x1p62 { pieceBytes = max(pieceBytes ?? 0, Int64(piece)) }
    }

    /// How much the next request of a fixed count of `connections` may fetch, with `left` bytes of the file still to
    /// come over all of them: with one connection, all of it (no other connection's tail is to end with it, and the
    /// bytes come in file order anyway); with more, nil while requests are cheap or not yet measured (the plan's
    /// pieces, as they are), else `pieceBytes`, but no more than each connection's share of what is left, so that the
    /// connections end together, the last requests smaller, and an idle connection takes half of a lagging one's.
    /// A first byte already slow (`slowFirstByte`, the probe's) before any rate is measured gives each connection
    /// its share at once: the plan's small first pieces would each pay that wait.
    func pieceSize(connections: Int, left: Int64) -> Int64? {
        guard connections > 1 else { return .max }
        let share = max(1, left / Int64(connections))
        if let pieceBytes { return min(pieceBytes, share) }
        guard perConnectionRate == nil, let firstByte = typicalFirstByte, firstByte >= Self.slowFirstByte else {
            return nil
        }
        return share
    }
}
