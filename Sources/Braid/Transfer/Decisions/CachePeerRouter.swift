/// Which cache peer a slice of the file is asked of, and how each peer has behaved: a pure value, tested event by
/// event. The file is cut into slices of `sliceSize` bytes; slice `k` goes to the first peer in its rendezvous
/// order (`Rendezvous`) that is neither down nor skipped, and to the origin when none is left.
///
/// A peer's life is `State`. Caches are not trusted: a peer whose answer is not the origin's file is skipped for
/// this file, one that fails is down for a while, and no failure of a peer fails the download.
///
/// Design: `docs/design/cache-peers.md`.
struct CachePeerRouter: Sendable, Equatable {
    /// A peer's standing for this file.
    enum State: Sendable, Equatable {
        /// Asked for its slices: → `down` when it refuses, stalls or errors; → `skipped` when what it serves is not
        /// the origin's file.
        case up
        /// Failed: its slices go to the next peer in their order until `until`, then it is `up` again (on trial:
        /// another failure doubles the wait).
        case down(until: Double)
        /// Final for this file: it served another version, another length, or bytes that failed their digest.
        case skipped(reason: String)
    }

    struct Peer: Sendable, Equatable {
        /// What rendezvous hashing knows it by: its URL template as given, the same on every host of a fleet.
        let identity: String
        /// How messages name it: its scheme, host and port, without a login.
        let name: String
        var state = State.up
        /// Failures since it last served a slice, which set how long it stays down.
        var failures = 0
    }

    /// What every host hashes for this file: its URL without the query (`CachePeer.resourceIdentity(of:)`).
    let resource: String
    /// Bytes per slice: the unit of the file that one peer serves, matching the caches' own slice size.
    let sliceSize: Int64
    private(set) var peers: [Peer]

    /// How long a peer stays down after its first failure in a row; each further failure doubles it.
    static let firstBackoff = 1.0
    static let maximumBackoff = 60.0

    init(resource: String, sliceSize: Int64, peers: [(identity: String, name: String)]) {
        precondition(sliceSize > 0, "a slice has bytes")
        self.resource = resource
        self.sliceSize = sliceSize
        self.peers = peers.map { Peer(identity: $0.identity, name: $0.name) }
    }

    // MARK: Queries

    /// The slice that byte `offset` belongs to.
    func slice(containing offset: Int64) -> Int64 { offset / sliceSize }

    /// The bytes of the slice holding `offset`, in a file of `totalLength` bytes.
    func sliceRange(containing offset: Int64, totalLength: Int64) -> Range<Int64> {
        let start = slice(containing: offset) * sliceSize
        return start..<min(totalLength, start + sliceSize)
    }

    /// Every peer, from the one that serves `slice` first to the last one that would.
    func order(ofSlice slice: Int64) -> [Int] {
        Rendezvous.order(peers: peers.map(\.identity), resource: resource, slice: slice)
    }

    /// The peer to ask for the slice holding `offset` at time `now`, or nil for the origin.
    func route(offset: Int64, now: Double) -> Int? {
        order(ofSlice: slice(containing: offset)).first { isUsable($0, now: now) }
    }

    /// Whether `peer` may be asked for a slice at time `now`.
    func isUsable(_ peer: Int, now: Double) -> Bool {
        switch peers[peer].state {
        case .up: true
        case let .down(until): now >= until
        case .skipped: false
        }
    }

    // MARK: Events

    /// `peer` served a slice as asked: its failures are forgotten.
    mutating func served(by peer: Int) {
        guard case .skipped = peers[peer].state else {
            peers[peer].state = .up
            peers[peer].failures = 0
            return
        }
    }

    /// `peer` refused, stalled or errored at `now`: it is down, for longer after each failure in a row. A failure
    /// of a request sent before it went down does not count again. Returns how long it is down, or nil when it
    /// already was (or is skipped).
    mutating func failed(_ peer: Int, now: Double) -> Double? {
        switch peers[peer].state {
        case .skipped:
            return nil
        case let .down(until) where until > now:
            return nil
        case .up, .down:
            peers[peer].failures += 1
            let backoff = min(Self.maximumBackoff, Self.firstBackoff * Double(1 << min(peers[peer].failures - 1, 16)))
            peers[peer].state = .down(until: now + backoff)
            return backoff
        }
    }

    /// `peer` is not asked again for this file. Returns false when it already was skipped.
    mutating func skip(_ peer: Int, because reason: String) -> Bool {
        if case .skipped = peers[peer].state { return false }
        peers[peer].state = .skipped(reason: reason)
        return true
    }
}
