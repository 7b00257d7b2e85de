import Testing

@testable import Braid

/// How `-n auto` meets a far server (issue 29): a start that opens in waves where its first bytes come slowly,
/// requests that share what is left among the count it is going to, and no connection added that what is left
/// would give too little work.
@Suite("ConnectionPolicy against far servers")
struct ConnectionPolicyDistantTests {
    static let configuration = ConnectionPolicy.Configuration(
        initial: 8, checksFewerAtStart: true, stepHorizon: 2, shareHorizon: 1.5, distantStart: 24, ceiling: 64)

    /// Samples every 0.05 s, each connection receiving `perConnection` bytes a second, all of them answered, `left`
    /// bytes of the file still to come; returns the counts it changed to, until it holds or `seconds` pass.
    static func run(
        _ policy: inout ConnectionPolicy, perConnection: Double, left: Int64, seconds: Double, now: inout Double,
        received: inout Int64
    ) -> [Int] {
        var counts: [Int] = []
        let end = now + seconds
        while now < end, !policy.phase.isHolding {
            now += 0.05
            received += Int64(perConnection * 0.05) * Int64(policy.target)
            if policy.sample(
                now: now, receivedTotal: received, active: policy.target, receiving: policy.target, rateLimit: nil,
                left: left)
            {
                counts.append(policy.target)
            }
        }
        return counts
    }

    @Test("starting connections whose first bytes take 0.15 s open in waves to 24 as soon as all of them receive")
    func distantStart() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        for _ in 0..<9 { policy.firstByte(after: 0.15) }
        let first = policy.sample(now: 0.3, receivedTotal: 0, active: 8, receiving: 8, rateLimit: nil, left: 1 << 30)
        #expect(first && policy.target == 12, "the first wave, not yet measured")
        let second = policy.sample(
            now: 0.45, receivedTotal: 0, active: 12, receiving: 12, rateLimit: nil, left: 1 << 30)
        #expect(second && policy.target == 24)
        #expect(policy.phase.isSettling, "24 are measured once they have run a while: \(policy.phase)")
        #expect(policy.sharingCount == 24)
    }

    @Test("a slow probe alone opens no waves: the starting connections answered at once (a loaded machine)")
    func slowProbeAlone() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        policy.firstByte(after: 0.35)
        for _ in 0..<8 { policy.firstByte(after: 0.001) }
        let changed = policy.sample(now: 0.3, receivedTotal: 0, active: 8, receiving: 8, rateLimit: nil, left: 1 << 30)
        #expect(!changed && policy.target == 8)
    }

    @Test("where requests are costly, no step adds connections that what is left gives less than 1.5 s of work each")
    func shareHorizon() {
        // 10 MB/s a connection, 300 MB left: 20 connections have 1.5 s of work each.
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        for _ in 0..<9 { policy.firstByte(after: 0.01) }
        var now = 0.0
        var received: Int64 = 0
        let counts = Self.run(
            &policy, perConnection: 10e6, left: 300_000_000, seconds: 10, now: &now, received: &received)
        #expect(counts == [12, 20], "8 measured, then 12, then a linear step: to 20, not the ceiling")
        #expect(policy.reason == .notEnoughWork)
        // Where requests are cheap (1 ms: a fiftieth of a mebibyte waited for), more connections cost little.
        var cheap = ConnectionPolicy(configuration: Self.configuration, now: 0)
        for _ in 0..<9 { cheap.firstByte(after: 0.001) }
        now = 0
        received = 0
        let cheapCounts = Self.run(
            &cheap, perConnection: 10e6, left: 300_000_000, seconds: 10, now: &now, received: &received)
        #expect(cheapCounts.prefix(2) == [12, 64], "the linear step goes to the ceiling")
    }

    @Test("where the first byte is slow, requests share the file among as many as a distant start opens")
    func sharesBeforeMeasuring() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        #expect(policy.pieceSize(totalLength: 1 << 30) == nil, "nothing known: the plan's pieces")
        policy.firstByte(after: 0.05)
        #expect(policy.pieceSize(totalLength: 1 << 30) == 64 << 20, "at most 64 MiB until a rate is measured")
        #expect(policy.sharingCount == 24)
        _ = policy.sample(now: 0.1, receivedTotal: 0, active: 8, rateLimit: nil)
        _ = policy.sample(now: 0.2, receivedTotal: 40_000_000, active: 8, rateLimit: nil)
        #expect(policy.pieceBytes != nil, "costly: 50 MB/s a connection, 0.05 s a first byte")
        #expect(policy.pieceSize(totalLength: 1 << 30) == .max, "a share of what is left, however large")
    }
}
