import Testing

@testable import Braid

/// After a step that scaled linearly, the next goes to sixteen times as many in waves, measured as one step.
@Suite("ConnectionPolicy: steps opened in waves")
struct ConnectionPolicyWaveTests {
    /// A policy that measured 4 and then 8 connections at 10 MB/s each, and so opens its first wave to 12.
    static func afterLinearStep(ceiling: Int = 64, now: inout Double, received: inout Int64) -> ConnectionPolicy {
        var policy = ConnectionPolicy(configuration: .init(ceiling: ceiling), now: 0)
        ConnectionPolicyTests.cycle(&policy, rate: 40e6, now: &now, received: &received)
        ConnectionPolicyTests.cycle(&policy, rate: 80e6, now: &now, received: &received)
        return policy
    }

    @Test("a wave starts only once every connection of the last one receives; a server that takes 8 refuses 4")
    func wavesWaitForFirstBytes() {
        var now = 0.0
        var received: Int64 = 0
        var policy = Self.afterLinearStep(now: &now, received: &received)
        #expect(policy.target == 12 && policy.waveGoal == 64)
        // The server takes 8: the 4 new connections are refused, none receives, and no further wave starts.
        for _ in 0..<10 {
            now += 0.01
            let changed = policy.sample(now: now, receivedTotal: received, active: 12, receiving: 8, rateLimit: nil)
            #expect(!changed)
        }
        #expect(policy.target == 12, "no connection beyond the wave's 4 is sent before they receive")
        for accepted in [11, 10, 9, 8] { _ = policy.refused(now: now, accepted: accepted) }
        #expect(policy.target == 8 && policy.reason == .refused && policy.phase.isHolding)
        #expect(policy.waveGoal == nil, "a refusal ends the step")

        // Where every wave receives, the waves go on to the goal (8 × 16), one a first-byte round apart: four times
        // as many after 12, then the goal; the step is measured once it is reached.
        var open = Self.afterLinearStep(ceiling: 200, now: &now, received: &received)
        #expect(open.target == 12 && open.waveGoal == 128)
        var waves: [Int] = []
        for _ in 0..<10 where open.waveGoal != nil {
            now += 0.01
            let changed = open.sample(
                now: now, receivedTotal: received, active: open.target, receiving: open.target, rateLimit: nil)
            if changed { waves.append(open.target) }
        }
        #expect(waves == [48, 128])
        #expect(open.waveGoal == nil && !open.phase.isHolding)
        #expect(open.best?.count == 8, "the waves are one step, measured against 8")
    }

    @Test("with a ceiling of 16, a linear step from 8 opens 12 and then 16")
    func wavesStopAtTheCeiling() {
        var now = 0.0
        var received: Int64 = 0
        var policy = Self.afterLinearStep(ceiling: 16, now: &now, received: &received)
        #expect(policy.target == 12 && policy.waveGoal == 16)
        now += 0.01
        let changed = policy.sample(now: now, receivedTotal: received, active: 12, receiving: 12, rateLimit: nil)
        #expect(changed && policy.target == 16 && policy.waveGoal == nil)
        let more = ConnectionPolicyTests.cycle(&policy, rate: 160e6, now: &now, received: &received)
        #expect(!more && policy.target == 16 && policy.reason == .ceiling)
    }

    @Test("under a rate limit, a jump goes no further than the connections that reach it at the measured rate each")
    func jumpWithinRateLimit() {
        var policy = ConnectionPolicy(configuration: .init(ceiling: 64), now: 0)
        var now = 0.0
        var received: Int64 = 0
        ConnectionPolicyTests.cycle(&policy, rate: 40e6, now: &now, received: &received, rateLimit: 200e6)
        ConnectionPolicyTests.cycle(&policy, rate: 80e6, now: &now, received: &received, rateLimit: 200e6)
        // 10 MB/s a connection: 20 reach the limit, not the 64 that 8 × 16 and the ceiling would allow.
        #expect(policy.target == 12 && policy.waveGoal == 20)
    }

    @Test("a jump that gained under half of linear is followed by tries with half as many while they do as well")
    func overshootTriesFewer() {
        var now = 0.0
        var received: Int64 = 0
        var policy = Self.afterLinearStep(now: &now, received: &received)
        // The server gives at most 160 MB/s in all, what 16 connections of 10 MB/s take.
        var tried: [Int] = []
        for _ in 0..<12 {
            let rate = Double(min(policy.target, 16)) * 10e6
            if ConnectionPolicyTests.cycle(&policy, rate: rate, now: &now, received: &received) {
                tried.append(policy.target)
            }
            if policy.phase.isHolding, policy.reason != .fewerDidAsWell(percent: 0) { break }
        }
        #expect(tried == [64, 32, 16, 8, 16])
        #expect(policy.target == 16 && policy.reason == .fewerLost(tried: 8, percent: 50))
    }

    @Test("a wave that cannot fill (too little left to share) ends the step where it is")
    func waveThatCannotFill() {
        var now = 0.0
        var received: Int64 = 0
        var policy = Self.afterLinearStep(now: &now, received: &received)
        #expect(policy.target == 12)
        var changed = false
        for _ in 0..<300 {
            now += 0.01
            received += 100_000
            changed = changed || policy.sample(now: now, receivedTotal: received, active: 10, rateLimit: nil)
        }
        #expect(!changed && policy.target == 12 && policy.waveGoal == nil)
        #expect(policy.reason == .notEnoughWork && policy.phase.isHolding)
    }
}
