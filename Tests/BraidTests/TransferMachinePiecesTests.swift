import CCurl
import Testing

@testable import Braid

/// Checking pieces: a `206`'s `Content-Digest` and a Metalink's piece hashes. Files are 300 bytes as in
/// `TransferMachineTests`; digests are stand-ins (the machine compares none itself: the verifier answers).
@Suite("TransferMachine pieces")
struct TransferMachinePiecesTests {
    typealias Base = TransferMachineTests

    static let sha = [UInt8](repeating: 7, count: 32)
    /// `sha` as a `Content-Digest` value.
    static let contentDigest = "sha-256=:BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=:"

    static func partial(_ first: Int64, _ last: Int64, digest: Bool = true) -> ResponseHeaders {
        var lines = [
            "HTTP/1.1 206 Partial Content", "Content-Range: bytes \(first)-\(last)/300",
            "Content-Length: \(last - first + 1)", "ETag: \"v1\"",
        ]
        if digest { lines.append("Content-Digest: \(contentDigest)") }
        var headers = ResponseHeaders()
        for line in lines { headers.consume(line: line + "\r\n") }
        return headers
    }

    static func check(_ range: Range<Int64>, _ digest: [UInt8] = sha) -> PieceCheck {
        PieceCheck(range: range, algorithm: .sha256, digest: digest)
    }

    /// Piece hashes of 50-byte pieces: piece `i`'s digest is 32 bytes of `i`.
    static let pieces = PieceHashes(
        algorithm: .sha256, pieceLength: 50, digests: (0..<6).map { [UInt8](repeating: UInt8($0), count: 32) })

    static func machine(
        ranges: [Range<Int64>] = Base.threeSegments,
        slots: Int = 3,
        resources: [RemoteResource] = [Base.origin],
        pieceHashes: PieceHashes? = nil,
        retryPolicy: RetryPolicy = RetryPolicy()
    ) -> TransferMachine {
        TransferMachine(
            resource: resources[0],
            sources: resources.map { Source(resource: $0, usesRanges: true) },
            scheduler: SegmentScheduler(
                ranges: ranges, connectionLimit: slots, minimumSteal: 10, retryPolicy: retryPolicy,
                verified: pieceHashes == nil ? nil : Array(repeating: 0, count: ranges.count),
                pieceAlignment: pieceHashes?.pieceLength),
            configuration: TransferMachine.Configuration(
                usesRanges: true, slots: slots, randomSeed: 0, pieceHashes: pieceHashes, checksContentDigests: true)
        )
    }

    @Test("A 206 with Content-Digest is checked before its bytes count: confirmed only once it matches")
    func contentDigestChecked() {
        var machine = Self.machine(slots: 1)
        _ = machine.start(now: 0)
        #expect(machine.responseHead(slot: 0, headers: Self.partial(0, 99), now: 0) == [])
        machine.deliver(slot: 0, bytes: 100)
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 1) == [
                .verify(segment: 0, checks: [Self.check(0..<100)]),
                .start(slot: 0, source: 0, request: Base.ranged(100..<200)),
            ])
        #expect(machine.confirmedUpTo == 0, "nothing is confirmed before the check")
        #expect(machine.piecesVerified(segment: 0, bad: [], now: 1.1) == [.confirm(upTo: 100)])
    }

    @Test("A range whose Content-Digest does not match is fetched again alone, from another mirror, as a retry")
    func contentDigestMismatchRefetched() {
        var machine = Self.machine(slots: 2, resources: [Base.origin, Base.mirror])
        _ = machine.start(now: 0)
        _ = machine.responseHead(slot: 0, headers: Self.partial(0, 99), now: 0)
        machine.deliver(slot: 0, bytes: 100)
        _ = machine.transferEnded(slot: 0, result: .finished, now: 1)
        let actions = machine.piecesVerified(segment: 0, bad: [0..<100], now: 1)
        let delay = Base.backoff(attempt: 1, draw: 2)
        #expect(
            actions == [
                .retry(
                    reason:
                        "bytes 0-99 from https://example.com/file.iso did not match their digest; fetching them again",
                    delay: delay)
            ])
        #expect(machine.statistics.retries == 1)
        // Segment 1 is still being fetched from the mirror (slot 1); slot 0 took segment 2 from the origin.
        _ = machine.responseHead(slot: 0, headers: Self.partial(200, 299), now: 1)
        machine.deliver(slot: 0, bytes: 100)
        let ended = machine.transferEnded(slot: 0, result: .finished, now: 1 + delay)
        #expect(
            ended.contains(.start(slot: 0, source: 1, request: Base.ranged(0..<100))),
            "the bad range goes to the mirror, though the mirror has more connections")
    }

    @Test("A response with a Content-Digest cut short leaves nothing behind: retried from its first byte")
    func contentDigestCutShortDiscarded() {
        var machine = Self.machine(slots: 1)
        _ = machine.start(now: 0)
        _ = machine.responseHead(slot: 0, headers: Self.partial(0, 99), now: 0)
        machine.deliver(slot: 0, bytes: 60)
        #expect(
            machine.transferEnded(slot: 0, result: Base.reset, now: 1) == [
                .retry(reason: "Connection reset by peer", delay: Base.backoff(attempt: 1, draw: 1)),
                .start(slot: 0, source: 0, request: Base.ranged(100..<200)),
            ])
        #expect(machine.scheduler.segments[0].flushed == 0)
        #expect(machine.confirmedUpTo == 0)
    }

    @Test("A response vouched for by a Content-Digest is not split by an idle connection")
    func contentDigestNotStolen() {
        var machine = Self.machine(ranges: [0..<300], slots: 2)
        _ = machine.start(now: 0)
        // The second slot took 150..<300 at once; the first response then carries a digest.
        _ = machine.responseHead(slot: 0, headers: Self.partial(0, 299), now: 0)
        _ = machine.responseHead(slot: 1, headers: Self.partial(150, 299), now: 0)
        machine.deliver(slot: 1, bytes: 150)
        #expect(
            machine.transferEnded(slot: 1, result: .finished, now: 1) == [
                .verify(segment: 1, checks: [Self.check(150..<300)])
            ], "the idle slot does not steal")
        #expect(machine.quietTick(now: 1.5) == [])
    }

    @Test("A response without a Content-Digest is confirmed when it ends, as without checks")
    func noContentDigestConfirmedAtEnd() {
        var machine = Self.machine(slots: 1)
        _ = machine.start(now: 0)
        _ = machine.responseHead(slot: 0, headers: Self.partial(0, 99, digest: false), now: 0)
        machine.deliver(slot: 0, bytes: 100)
        #expect(machine.transferEnded(slot: 0, result: .finished, now: 1).first == .confirm(upTo: 100))
    }

    @Test("Piece hashes: a written segment's pieces are checked; a bad piece is fetched again alone")
    func badPieceRefetchedAlone() {
        var machine = Self.machine(slots: 1, pieceHashes: Self.pieces)
        _ = machine.start(now: 0)
        _ = machine.responseHead(slot: 0, headers: Base.partial(0, 99), now: 0)
        machine.deliver(slot: 0, bytes: 100)
        let checks = [Self.check(0..<50, Self.pieces.digests[0]), Self.check(50..<100, Self.pieces.digests[1])]
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 1) == [
                .verify(segment: 0, checks: checks),
                .start(slot: 0, source: 0, request: Base.ranged(100..<200)),
            ])
        _ = machine.piecesVerified(segment: 0, bad: [50..<100], now: 1)
        #expect(machine.confirmedUpTo == 50, "the good piece before the bad one is confirmed")
        let segments = machine.scheduler.order.map { machine.scheduler.segments[$0] }
        #expect(segments.map { $0.start..<$0.end } == [0..<50, 50..<100, 100..<200, 200..<300])
        _ = machine.responseHead(slot: 0, headers: Base.partial(100, 199), now: 1)
        machine.deliver(slot: 0, bytes: 100)
        let next = machine.transferEnded(slot: 0, result: .finished, now: 5)
        #expect(next.contains(.start(slot: 0, source: 0, request: Base.ranged(50..<100))))
    }

    @Test("A piece that keeps failing its hash ends the download with an integrity error naming its range")
    func repeatedMismatchFails() {
        var policy = RetryPolicy()
        policy.maximumAttempts = 2
        var machine = Self.machine(ranges: [0..<300], slots: 1, pieceHashes: Self.pieces, retryPolicy: policy)
        _ = machine.start(now: 0)
        _ = machine.responseHead(slot: 0, headers: Base.partial(0, 299), now: 0)
        machine.deliver(slot: 0, bytes: 300)
        _ = machine.transferEnded(slot: 0, result: .finished, now: 1)
        _ = machine.piecesVerified(segment: 0, bad: [100..<150], now: 1)
        let refetched = machine.order(startingAt: 100)
        _ = machine.tick(now: 100)
        _ = machine.responseHead(slot: 0, headers: Base.partial(100, 149), now: 100)
        machine.deliver(slot: 0, bytes: 50)
        #expect(
            machine.transferEnded(slot: 0, result: .finished, now: 101).first
                == .verify(
                    segment: refetched, checks: [Self.check(100..<150, Self.pieces.digests[2])]))
        let actions = machine.piecesVerified(segment: refetched, bad: [100..<150], now: 102)
        guard case .finish(.failed(let error)) = actions.last else {
            Issue.record("expected a failure, got \(actions)")
            return
        }
        #expect(error.code == .integrity)
        #expect(error.message.contains("bytes 100-149 did not match their digest after 2 attempts"))
        #expect(machine.scheduler.manifestSegments.map(\.verified) == [100, 0, 150])
    }

    @Test("Steals split only at piece boundaries, so every segment is made of whole pieces")
    func stealsAlignToPieces() {
        let hundreds = PieceHashes(
            algorithm: .sha256, pieceLength: 100, digests: Array(repeating: Self.sha, count: 3))
        var machine = Self.machine(ranges: [0..<300], slots: 2, pieceHashes: hundreds)
        #expect(
            machine.start(now: 0) == [
                .start(slot: 0, source: 0, request: Base.ranged(0..<300)),
                .shrink(slot: 0, end: 200),
                .start(slot: 1, source: 0, request: Base.ranged(200..<300)),
            ], "half would be 150, inside the second piece")
    }
}

extension TransferMachine {
    /// The index of the segment that starts at `start`.
    func order(startingAt start: Int64) -> Int {
        scheduler.order.first { scheduler.segments[$0].start == start }!
    }
}
