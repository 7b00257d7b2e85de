import Testing

@testable import Braid

/// How `-n auto` starts cold (nothing remembered of the server): at 8 connections, as `-n 8` does, checked with
/// fewer when more do not pay, and no step up when what is left of the file would not repay it.
@Suite("ConnectionPolicy start")
struct ConnectionPolicyStartTests {
    static let configuration = ConnectionPolicy.Configuration(
        initial: 8, checksFewerAtStart: true, stepHorizon: 2, ceiling: 64)

    /// Samples every 0.1 s at `rate` bytes a second with every connection running and `left` bytes of the file
    /// still to come, until the count changes or is held; returns whether it changed.
    @discardableResult
    static func cycle(
        _ policy: inout ConnectionPolicy, rate: Double, left: Int64, now: inout Double, received: inout Int64
    ) -> Bool {
        for _ in 0..<20 {
            now += 0.1
            received += Int64(rate * 0.1)
            if policy.sample(now: now, receivedTotal: received, active: policy.target, rateLimit: nil, left: left) {
                return true
            }
            if policy.phase.isHolding { return false }
        }
        return false
    }

    @Test("it starts at 8, with the plan's own pieces until a request's cost is measured")
    func startsAtEight() {
        let policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        #expect(policy.target == 8)
        #expect(policy.pieceSize(totalLength: 1 << 30) == nil)
    }

    @Test("a start of 8 that gains nothing from 12 tries 4 at once, and halves on while fewer do as well")
    func checksFewerWhenMoreDoNotPay() {
        // A server whose total is capped at 40 MB/s: any count gets the same.
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        for expected in [12, 4, 2, 1] {
            #expect(Self.cycle(&policy, rate: 40e6, left: 1 << 30, now: &now, received: &received))
            #expect(policy.target == expected, "\(policy.reason)")
        }
    }

    @Test("a start whose step up paid is not checked with fewer: a later step that does not pay is undone only")
    func noCheckAfterAPayingStep() {
        // Each connection capped at 10 MB/s up to 12, nothing more beyond.
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        #expect(Self.cycle(&policy, rate: 80e6, left: 1 << 40, now: &now, received: &received))
        #expect(policy.target == 12)
        #expect(Self.cycle(&policy, rate: 120e6, left: 1 << 40, now: &now, received: &received))
        #expect(policy.target == 64, "a linear step: sixteen times as many, to the ceiling")
        #expect(Self.cycle(&policy, rate: 120e6, left: 1 << 40, now: &now, received: &received))
        #expect(policy.target == 12)
        #expect(policy.phase.isHolding)
    }

    @Test("no step up while the work left lasts less than the horizon at the measured throughput")
    func horizon() {
        var short = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        // 300 MB left at 200 MB/s: 1.5 s, under the 2 s horizon.
        #expect(!Self.cycle(&short, rate: 200e6, left: 300_000_000, now: &now, received: &received))
        #expect(short.target == 8)
        #expect(short.reason == .notEnoughWork)
        #expect(short.learned == nil, "nothing to remember")
        var long = ConnectionPolicy(configuration: Self.configuration, now: 0)
        now = 0
        received = 0
        #expect(Self.cycle(&long, rate: 200e6, left: 500_000_000, now: &now, received: &received))
        #expect(long.target == 12, "2.5 s left: a step may pay")
    }
}
