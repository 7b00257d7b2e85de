import CCurl
import Testing

@testable import Braid

/// Cache peers, event by event. The 300-byte file of `TransferMachineTests` is cut into slices of 100; three
/// peers follow the origin as sources 1, 2 and 3 (peers 0, 1 and 2). For `https://example.com/file.iso`,
/// rendezvous hashing orders slice 0's peers [1, 2, 0], slice 1's [1, 0, 2] and slice 2's [2, 1, 0]: slices 0 and
/// 1 go to source 2 first, slice 2 to source 3.
@Suite("TransferMachine cache peers")
struct TransferMachineCachePeerTests {
    typealias Base = TransferMachineTests

    static let names = ["http://cache-1:8080", "http://cache-2:8080", "http://cache-3:8080"]

    static func machine(
        progress: [Int64] = [],
        slots: Int = 3,
        sharesConnections: Bool = false,
        pieceHashes: PieceHashes? = nil,
        retryPolicy: RetryPolicy = RetryPolicy()
    ) -> TransferMachine {
        let router = CachePeerRouter(
            resource: "https://example.com/file.iso", sliceSize: 100,
            peers: zip(RendezvousTests.peers, names).map { ($0, $1) })
        return TransferMachine(
            resource: Base.origin,
            sources: [Source(resource: Base.origin, usesRanges: true)]
                + (0..<3).map { Source(peer: $0, host: "cache-\($0 + 1)", serving: Base.origin) },
            scheduler: SegmentScheduler(
                ranges: Base.threeSegments, progress: progress, connectionLimit: slots, minimumSteal: 10,
                retryPolicy: retryPolicy,
                verified: pieceHashes == nil ? nil : Array(repeating: 0, count: 3),
                pieceAlignment: pieceHashes?.pieceLength, sliceSize: 100),
            configuration: TransferMachine.Configuration(
                usesRanges: true, slots: slots, sharesConnections: sharesConnections, randomSeed: 0,
                pieceHashes: pieceHashes),
            peers: router
        )
    }

    /// A request for the whole slice `slice`, filling `range` of it.
    static func slice(_ slice: Range<Int64>, filling range: Range<Int64>? = nil) -> TransferRequest {
        let range = range ?? slice
        return TransferRequest(range: range, skip: range.lowerBound - slice.lowerBound, ranged: true, asked: slice)
    }

    static let unavailable = Base.head("HTTP/1.1 503 Service Unavailable", "Content-Length: 0")

    @Test("Each slice is asked, whole, of the peer rendezvous hashing picks for it, never of the origin")
    func slicesGoToTheirPeers() {
        var machine = Self.machine()
        #expect(
            machine.start(now: 0) == [
                .start(slot: 0, source: 2, request: Self.slice(0..<100)),
                .start(slot: 1, source: 2, request: Self.slice(100..<200)),
                .start(slot: 2, source: 3, request: Self.slice(200..<300)),
            ])
    }

    @Test("A resumed slice is still asked whole; the bytes already on disk are skipped")
    func resumedSliceAskedWhole() {
        var machine = Self.machine(progress: [40, 0, 0], slots: 1)
        #expect(
            machine.start(now: 0) == [
                .confirm(upTo: 40),
                .start(slot: 0, source: 2, request: Self.slice(0..<100, filling: 40..<100)),
            ])
    }

    @Test("A peer's slice that arrives whole completes its segment; its bytes count as the peers'")
    func servedSliceCompletes() {
        var machine = Self.machine(slots: 1)
        _ = machine.start(now: 0)
        #expect(machine.responseHead(slot: 0, headers: Base.partial(0, 99), now: 0) == [])
        machine.deliver(slot: 0, bytes: 100)
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 1) == [
                .confirm(upTo: 100), .start(slot: 0, source: 2, request: Self.slice(100..<200)),
            ])
        #expect(machine.statistics.peerBytes == 100)
        #expect(machine.written == [.init(range: 0..<100, peer: 1)])
        let progress = machine.progress(now: 1)
        #expect(progress.peerBytes == 100)
        #expect(progress.originBytes == 0)
    }

    @Test("A peer that refuses is down for a second: its slices go to the next peer, no retry is counted")
    func refusingPeerIsDown() {
        var machine = Self.machine(slots: 1)
        _ = machine.start(now: 0)
        #expect(machine.responseHead(slot: 0, headers: Self.unavailable, now: 0) == [.abort(slot: 0)])
        let actions = machine.transferEnded(slot: 0, result: .aborted, now: 0)
        #expect(
            actions == [
                .notice(
                    "cache peer http://cache-2:8080 failed (the server answered 503 (busy)); its slices go to the next "
                        + "peer or the origin for 1 s"),
                .start(slot: 0, source: 3, request: Self.slice(0..<100)),
            ])
        #expect(machine.statistics.retries == 0)
        #expect(machine.peers?.peers[1].state == .down(until: 1))
    }

    @Test("Once its wait is over, a peer that was down is asked for its slices again")
    func downPeerComesBack() {
        var machine = Self.machine(slots: 1)
        _ = machine.start(now: 0)
        // Peer 1 fails at 0: slice 0 goes to peer 2.
        #expect(
            machine.transferEnded(slot: 0, result: Base.reset, now: 0).last
                == .start(slot: 0, source: 3, request: Self.slice(0..<100)))
        _ = machine.responseHead(slot: 0, headers: Base.partial(0, 99), now: 0)
        machine.deliver(slot: 0, bytes: 100)
        // Slice 1's first peer, 1, is still down at 0.5: its second, 0, serves it.
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 0.5).last
                == .start(slot: 0, source: 1, request: Self.slice(100..<200)))
        // Peer 0 fails at 1.2, when peer 1's second is over: peer 1 is asked again.
        #expect(
            machine.transferEnded(slot: 0, result: Base.reset, now: 1.2).last
                == .start(slot: 0, source: 2, request: Self.slice(100..<200)))
    }

    @Test("A peer whose copy has another ETag is skipped for this file, with a notice saying why")
    func otherVersionIsSkipped() {
        var machine = Self.machine(slots: 1)
        _ = machine.start(now: 0)
        let old = Base.head(
            "HTTP/1.1 206 Partial Content", "Content-Range: bytes 0-99/300", "Content-Length: 100", "ETag: \"v0\"")
        #expect(machine.responseHead(slot: 0, headers: old, now: 0) == [.abort(slot: 0)])
        #expect(
            machine.transferEnded(slot: 0, result: .aborted, now: 0) == [
                .notice(
                    "not using cache peer http://cache-2:8080 for this file: its copy has ETag \"v0\", the origin's "
                        + "is \"v1\""),
                .start(slot: 0, source: 3, request: Self.slice(0..<100)),
            ])
        #expect(machine.peers?.peers[1].state == .skipped(reason: "its copy has ETag \"v0\", the origin's is \"v1\""))
        #expect(!machine.sources[2].alive)
    }

    @Test(
        "A peer's answer that does not show the origin's version and length is another file",
        arguments: [
            ["HTTP/1.1 206 Partial Content", "Content-Range: bytes 0-99/300", "Content-Length: 100"],
            ["HTTP/1.1 206 Partial Content", "Content-Range: bytes 0-99/400", "Content-Length: 100", "ETag: \"v1\""],
            ["HTTP/1.1 200 OK", "Content-Length: 300", "ETag: \"v1\""],
        ])
    func strictAnswers(lines: [String]) {
        var machine = Self.machine(slots: 1)
        _ = machine.start(now: 0)
        var headers = ResponseHeaders()
        for line in lines { headers.consume(line: line + "\r\n") }
        _ = machine.responseHead(slot: 0, headers: headers, now: 0)
        _ = machine.transferEnded(slot: 0, result: .aborted, now: 0)
        guard case .skipped = machine.peers?.peers[1].state else {
            Issue.record("peer 1 is \(String(describing: machine.peers?.peers[1].state))")
            return
        }
    }

    @Test("With every peer of a slice down, the origin serves it, as an ordinary range")
    func originWhenAllPeersFail() {
        var machine = Self.machine(slots: 1)
        _ = machine.start(now: 0)
        var last: [TransferMachine.Action] = []
        for _ in 0..<3 {
            last = machine.transferEnded(slot: 0, result: Base.reset, now: 0)
        }
        #expect(last.last == .start(slot: 0, source: 0, request: Base.ranged(0..<100)))
    }

    @Test("No number of peer failures fails the download: the origin finishes it")
    func peersNeverFailTheDownload() {
        var policy = RetryPolicy()
        policy.maximumAttempts = 2
        var machine = Self.machine(slots: 1, retryPolicy: policy)
        _ = machine.start(now: 0)
        var now = 0.0
        var finished = false
        for _ in 0..<200 {
            guard case let .busy(attempt) = machine.slots[0] else {
                _ = machine.quietTick(now: now)
                now += 0.5
                continue
            }
            var actions: [TransferMachine.Action]
            if machine.isOrigin(attempt.source) {
                let range = attempt.request.range
                _ = machine.responseHead(
                    slot: 0, headers: Base.partial(range.lowerBound, range.upperBound - 1), now: now)
                machine.deliver(slot: 0, bytes: Int(range.count))
                actions = machine.transferEnded(slot: 0, result: .finished, now: now)
            } else {
                actions = machine.transferEnded(slot: 0, result: Base.reset, now: now)
            }
            if actions.contains(where: { if case .finish = $0 { return true } else { return false } }) {
                #expect(actions.last == .finish(.completed(length: 300)))
                finished = true
                break
            }
            now += 0.25
        }
        #expect(finished)
        #expect(machine.statistics.peerBytes == 0)
    }

    @Test("Bytes a peer sent that fail their piece digest are fetched from the origin, and the peer is skipped")
    func badPiecesFromAPeerGoToTheOrigin() {
        let pieces = PieceHashes(
            algorithm: .sha256, pieceLength: 100, digests: (0..<3).map { [UInt8](repeating: UInt8($0), count: 32) })
        var machine = Self.machine(slots: 1, pieceHashes: pieces)
        _ = machine.start(now: 0)
        _ = machine.responseHead(slot: 0, headers: Base.partial(0, 99), now: 0)
        machine.deliver(slot: 0, bytes: 100)
        let ended = machine.transferEnded(slot: 0, result: .finished, now: 1)
        #expect(
            ended.first
                == .verify(
                    segment: 0, checks: [PieceCheck(range: 0..<100, algorithm: .sha256, digest: pieces.digests[0])]))
        #expect(ended.last == .start(slot: 0, source: 2, request: Self.slice(100..<200)))
        let verified = machine.piecesVerified(segment: 0, bad: [0..<100], now: 1)
        #expect(
            verified.first
                == .notice(
                    "cache peer http://cache-2:8080 served bytes 0-99 that do not match their digest: fetching them "
                        + "from the origin, and not using that peer for this file"))
        #expect(verified.contains { if case .retry = $0 { return true } else { return false } })
        // The connection on slice 1 ends; slice 1 goes to the next peer of its order (source 1), and once that
        // serves it, slice 0 is the origin's: no peer is asked for it again.
        #expect(
            machine.transferEnded(slot: 0, result: Base.reset, now: 1) == [
                .start(slot: 0, source: 1, request: Self.slice(100..<200))
            ])
        _ = machine.responseHead(slot: 0, headers: Base.partial(100, 199), now: 2)
        machine.deliver(slot: 0, bytes: 100)
        let next = machine.transferEnded(slot: 0, result: .finished, now: 2)
        #expect(next.contains(.start(slot: 0, source: 0, request: Base.ranged(0..<100))), "\(next)")
    }

    @Test("Under a shared budget, a peer's request holds the origin's connection, and gives that one back")
    func budgetHoldsTheOrigin() {
        var machine = Self.machine(slots: 1, sharesConnections: true)
        #expect(machine.start(now: 0) == [.reserveConnection(source: 0)])
        #expect(
            machine.connectionReserved(source: 0, granted: true, now: 0) == [
                .start(slot: 0, source: 2, request: Self.slice(0..<100))
            ])
        _ = machine.responseHead(slot: 0, headers: Base.partial(0, 99), now: 0)
        machine.deliver(slot: 0, bytes: 100)
        let ended = machine.transferEnded(slot: 0, result: .finished, now: 1)
        #expect(ended.first == .releaseConnection(source: 0))
    }

    @Test("A peer that sends past its slice broke its word: down, and what it wrote thrown away")
    func overrunningPeer() {
        var machine = Self.machine(slots: 1)
        _ = machine.start(now: 0)
        _ = machine.responseHead(slot: 0, headers: Base.partial(0, 99), now: 0)
        machine.deliver(slot: 0, bytes: 100)
        #expect(machine.overran(slot: 0) == [.abort(slot: 0)])
        let ended = machine.transferEnded(slot: 0, result: .aborted, now: 0)
        #expect(ended.last == .start(slot: 0, source: 3, request: Self.slice(0..<100)))
        #expect(machine.scheduler.segments[0].flushed == 0)
    }
}

extension TransferMachine {
    /// The source of the request on `slot`, if one runs.
    func activeSource(slot: Int) -> Int? {
        if case let .busy(attempt) = slots[slot] { return attempt.source }
        return nil
    }
}
