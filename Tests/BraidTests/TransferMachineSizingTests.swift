import Testing

@testable import Braid

/// A fixed count's requests, sized from what they cost (`PieceSizer`): the plan's pieces are joined where first
/// bytes are slow, and one connection fetches its remainder in one request.
@Suite("TransferMachine piece sizes for a fixed count")
struct TransferMachineSizingTests {
    static let mebibyte: Int64 = 1 << 20

    /// A 64 MiB file planned as 64 pieces of 1 MiB, over `slots` connections, its requests sized.
    static func machine(slots: Int, sizesPieces: Bool = true) -> TransferMachine {
        var resource = TransferMachineTests.origin
        resource.length = 64 * mebibyte
        return TransferMachine(
            resource: resource,
            sources: [Source(resource: resource, usesRanges: true)],
            scheduler: SegmentScheduler(
                ranges: (0..<64).map { Int64($0) * mebibyte..<Int64($0 + 1) * mebibyte }, connectionLimit: slots),
            configuration: TransferMachine.Configuration(usesRanges: true, slots: slots, sizesPieces: sizesPieces)
        )
    }

    static func partial(_ range: Range<Int64>) -> ResponseHeaders {
        TransferMachineTests.partial(range.lowerBound, range.upperBound - 1, of: 64 * mebibyte)
    }

    static func requests(_ actions: [TransferMachine.Action]) -> [Range<Int64>] {
        actions.compactMap { if case let .start(_, _, request) = $0 { request.range } else { nil } }
    }

    /// Two connections' first requests (the plan's first two pieces) are answered `firstByte` seconds after they
    /// were sent, and then receive 4 MiB/s each until their pieces are whole; returns the range that the first
    /// connection to end asks for next. Times are binary fractions, so that the rates come out exact.
    static func nextRequest(afterFirstByte firstByte: Double, sizesPieces: Bool = true) -> Range<Int64> {
        var machine = Self.machine(slots: 2, sizesPieces: sizesPieces)
        let first = Self.requests(machine.start(now: 0))
        #expect(first == [0..<mebibyte, mebibyte..<2 * mebibyte], "the plan's pieces, before anything is measured")
        for slot in 0..<2 { _ = machine.responseHead(slot: slot, headers: Self.partial(first[slot]), now: firstByte) }
        var now = firstByte
        _ = machine.tick(now: now)
        for _ in 0..<16 {
            now += 1.0 / 64
            for slot in 0..<2 { machine.deliver(slot: slot, bytes: Int(mebibyte / 16)) }
            _ = machine.tick(now: now)
        }
        return Self.requests(machine.transferEnded(slot: 0, result: .finished, now: now)).first ?? 0..<0
    }

    @Test(
        "a fixed count's requests grow with the time to a first byte: about twenty waits' worth of a connection's bytes",
        arguments: [(1.0 / 512, 1), (1.0 / 16, 5), (1.0 / 8, 10), (1.0 / 4, 20), (1.0 / 2, 31)] as [(Double, Int64)])
    func piecesFollowFirstBytes(firstByte: Double, mebibytes: Int64) {
        // 4 MiB/s a connection: a wait of 1/16 s is 0.25 MiB, and twenty of them 5 MiB; a piece never exceeds a
        // connection's share of what is left (62 MiB over two: 31 MiB); cheap requests keep the plan's pieces.
        let next = Self.nextRequest(afterFirstByte: firstByte)
        #expect(next.lowerBound == 2 * Self.mebibyte)
        #expect(next.count == Int(mebibytes * Self.mebibyte), "\(next)")
    }

    @Test("unsized, a fixed count fetches the plan's pieces one by one however slow the first bytes")
    func unsizedKeepsThePlan() {
        #expect(Self.nextRequest(afterFirstByte: 0.25, sizesPieces: false) == 2 * Self.mebibyte..<3 * Self.mebibyte)
    }

    @Test("the probe's first byte sizes the first requests, the first one too: it asks for the probe's bytes, to adopt")
    func probeFirstByte() {
        var resource = TransferMachineTests.origin
        resource.length = 64 * Self.mebibyte
        var machine = TransferMachine(
            resource: resource,
            sources: [Source(resource: resource, usesRanges: true)],
            scheduler: SegmentScheduler(
                ranges: (0..<64).map { Int64($0) * Self.mebibyte..<Int64($0 + 1) * Self.mebibyte },
                connectionLimit: 4),
            configuration: TransferMachine.Configuration(
                usesRanges: true, slots: 4, sizesPieces: true, probeFirstByte: 0.15,
                probeRange: 0..<64 * Self.mebibyte)
        )
        // 64 MiB to come over 4 connections: 16 MiB each, the plan's pieces joined, the first request's too.
        let actions = machine.start(now: 0)
        let first = Self.requests(actions)
        #expect(first.map(\.count) == [16, 16, 16, 16].map { Int($0 * Self.mebibyte) }, "\(first)")
        #expect(first.first?.lowerBound == 0)
        // The first asks for all that the probe's response carries, so that it is the one adopted; none other does.
        let asked = actions.compactMap { if case let .start(_, _, request) = $0 { request.asked } else { nil } }
        #expect(asked == [0..<64 * Self.mebibyte], "\(actions)")
    }

    @Test("an adopted response's first byte is the one the executor measured, not the attempt's zero seconds")
    func adoptedFirstByte() {
        var machine = Self.machine(slots: 2)
        let first = Self.requests(machine.start(now: 10))
        _ = machine.responseHead(
            slot: 0, headers: Self.partial(first[0]), now: 10, wallClock: TransferMachineTests.wallClock + 10,
            waited: 0.25)
        #expect(machine.sizer?.typicalFirstByte == 0.25)
    }

    @Test("one connection fetches its remainder in one request, from the start and after a failure")
    func oneConnectionOneRequest() {
        var machine = Self.machine(slots: 1)
        #expect(Self.requests(machine.start(now: 0)) == [0..<64 * Self.mebibyte])
        _ = machine.responseHead(slot: 0, headers: Self.partial(0..<64 * Self.mebibyte), now: 0.1)
        machine.deliver(slot: 0, bytes: Int(5 * Self.mebibyte))
        let actions = machine.transferEnded(slot: 0, result: TransferMachineTests.reset, now: 0.2)
        #expect(Self.requests(actions).isEmpty, "a retry waits for its delay")
        let retried = Self.requests(machine.tick(now: 60))
        #expect(retried == [5 * Self.mebibyte..<64 * Self.mebibyte], "the rest, in one request")
    }
}

/// The piece sizer alone.
@Suite("PieceSizer")
struct PieceSizerTests {
    /// A sizer told of first bytes after `firstByte` seconds, and of `rate` bytes a second on each of 4 connections.
    static func measured(firstByte: Double, rate: Double) -> PieceSizer {
        var sizer = PieceSizer()
        sizer.firstByte(after: firstByte)
        sizer.sample(now: 0, receivedTotal: 0, active: 4)
        sizer.sample(now: 1, receivedTotal: Int64(4 * rate), active: 4)
        return sizer
    }

    @Test("pieces are twenty first bytes' worth of a connection's bytes, once that is a mebibyte or more")
    func twentyWaits() {
        #expect(Self.measured(firstByte: 0.1, rate: 10e6).pieceBytes == 20_000_000)
        #expect(Self.measured(firstByte: 0.001, rate: 10e6).pieceBytes == nil, "cheap: the plan's pieces")
        #expect(PieceSizer().pieceSize(connections: 8, left: 1 << 30) == nil, "nothing measured yet")
    }

    @Test("a first byte of 20 ms or more, before any rate, gives each connection its share of what is left at once")
    func slowFirstByteShares() {
        var sizer = PieceSizer()
        sizer.firstByte(after: 0.01)
        #expect(sizer.pieceSize(connections: 8, left: 800_000_000) == nil, "10 ms: the plan's pieces")
        sizer = PieceSizer()
        sizer.firstByte(after: 0.15)
        #expect(sizer.pieceSize(connections: 8, left: 800_000_000) == 100_000_000)
    }

    @Test("a connection's rate is taken only over 50 ms or more throughout which as many connections ran")
    func steadyRates() {
        var sizer = PieceSizer()
        sizer.sample(now: 0, receivedTotal: 0, active: 1)
        // Seven more begin receiving: this stretch says nothing of what each receives.
        sizer.sample(now: 0.1, receivedTotal: 1_000_000, active: 8)
        #expect(sizer.perConnectionRate == nil)
        sizer.sample(now: 0.12, receivedTotal: 3_000_000, active: 8)
        #expect(sizer.perConnectionRate == nil, "20 ms: a burst, not a rate")
        sizer.sample(now: 0.2, receivedTotal: 9_000_000, active: 8)
        #expect(sizer.perConnectionRate == 10_000_000)
    }

    @Test("a fixed count's piece is at most each connection's share of what is left; one connection takes it all")
    func shareAndOne() {
        let sizer = Self.measured(firstByte: 0.1, rate: 10e6)
        #expect(sizer.pieceSize(connections: 8, left: 1 << 30) == 20_000_000)
        #expect(sizer.pieceSize(connections: 8, left: 80_000_000) == 10_000_000)
        #expect(sizer.pieceSize(connections: 1, left: 80_000_000) == .max)
        #expect(PieceSizer().pieceSize(connections: 1, left: 80_000_000) == .max, "before anything is measured too")
    }
}
