import Testing

@testable import Braid

/// `-n auto` started from what an earlier download from the same server learned, and what a download learns.
@Suite("ConnectionPolicy: what a download learns and the next one starts from")
struct ConnectionPolicyMemoryTests {
    static func remembering(_ count: Int, refused: Bool = false, ceiling: Int = 64) -> ConnectionPolicy {
        ConnectionPolicy(
            configuration: .init(
                opensAlone: true, ceiling: ceiling, remembered: .init(connections: count, refused: refused)),
            now: 0)
    }

    @Test("it starts at the remembered count, without an opening request, says why, and still tries more")
    func startsThere() {
        var policy = Self.remembering(24)
        #expect(policy.target == 24)
        #expect(policy.phase.isSettling, "no opening request: \(policy.phase)")
        #expect(policy.reason == .remembered(24))
        #expect("\(policy.reason)" == "an earlier download from this server settled on 24")
        #expect(policy.learned == nil, "nothing measured yet")
        #expect(policy.pieceSize(totalLength: 240 << 20) == 10 << 20, "the 24 share the file, one request each")
        #expect(policy.pieceSize(totalLength: 4 << 30) == 64 << 20, "at most 64 MiB each")
        var now = 0.0
        var received: Int64 = 0
        let changed = ConnectionPolicyTests.cycle(&policy, rate: 240e6, now: &now, received: &received)
        #expect(changed && policy.target == 36, "24 measured, then half as many again: \(policy.target)")
    }

    @Test("a remembered count above the ceiling starts at the ceiling; a remembered one opens alone as without")
    func boundsAndOne() {
        let capped = Self.remembering(100, ceiling: 16)
        #expect(capped.target == 16)
        let one = Self.remembering(1)
        #expect(one.target == 1 && one.phase.isOpening && one.reason == .starting)
    }

    @Test("a server that refused more then is capped at the remembered count for the cool-down, so none is refused")
    func refusedStaysCapped() {
        var policy = Self.remembering(8, refused: true)
        #expect(policy.ceiling(now: 1) == 8)
        var now = 0.0
        var received: Int64 = 0
        let changed = ConnectionPolicyTests.cycle(&policy, rate: 80e6, now: &now, received: &received)
        #expect(!changed && policy.target == 8 && policy.reason == .ceiling)
        #expect(policy.learned == .init(connections: 8, refused: true), "still refused as far as it knows")
        #expect(policy.ceiling(now: 61) == 64, "after the cool-down it may try more")
    }

    /// A policy that remembered 16 (the ceiling) at 160 MB/s, held them, and at its first recheck measured them
    /// again at that rate and went on to try 8.
    static func halvedAtRecheck(now: inout Double, received: inout Int64) -> ConnectionPolicy {
        var policy = Self.remembering(16, ceiling: 16)
        ConnectionPolicyTests.cycle(&policy, rate: 160e6, now: &now, received: &received)
        #expect(policy.target == 16 && policy.phase.isHolding, "measured at the ceiling: \(policy.phase)")
        now += 15.1
        _ = policy.sample(now: now, receivedTotal: received, active: 16, rateLimit: nil)
        let halved = ConnectionPolicyTests.cycle(&policy, rate: 160e6, now: &now, received: &received)
        #expect(halved && policy.target == 8, "16 measured again, then 8 tried")
        return policy
    }

    @Test("at the first recheck a remembered count is checked against half as many, once; fewer are kept if as good")
    func checkedWithFewer() {
        var now = 0.0
        var received: Int64 = 0
        var policy = Self.halvedAtRecheck(now: &now, received: &received)
        // The server caps the total at 160 MB/s: 8 do as well, then 4 are tried and lose.
        ConnectionPolicyTests.cycle(&policy, rate: 159e6, now: &now, received: &received)
        #expect(policy.target == 4)
        ConnectionPolicyTests.cycle(&policy, rate: 80e6, now: &now, received: &received)
        #expect(policy.target == 8 && policy.reason == .fewerLost(tried: 4, percent: 50))
        #expect(policy.learned == .init(connections: 8, refused: false))
        // The next recheck tries more, as without a remembered count.
        now += 15.1
        _ = policy.sample(now: now, receivedTotal: received, active: 8, rateLimit: nil)
        let more = ConnectionPolicyTests.cycle(&policy, rate: 160e6, now: &now, received: &received)
        #expect(more && policy.target == 12)
    }

    @Test("where half as many lose, the remembered count comes back and is held")
    func halfLoses() {
        var now = 0.0
        var received: Int64 = 0
        var policy = Self.halvedAtRecheck(now: &now, received: &received)
        let back = ConnectionPolicyTests.cycle(&policy, rate: 80e6, now: &now, received: &received)
        #expect(back && policy.target == 16 && policy.phase.isHolding)
        #expect(policy.learned == .init(connections: 16, refused: false))
    }

    @Test("it learns the count it holds, or on a ramp cut short the best it measured; nothing from a rate limit")
    func learns() {
        var opening = ConnectionPolicy(configuration: .init(opensAlone: true, ceiling: 64), now: 0)
        #expect(opening.learned == nil, "the opening request alone tells nothing")
        _ = opening.refused(now: 0.01, accepted: 0)
        #expect(opening.learned == nil)

        var ramp = ConnectionPolicy(configuration: ConnectionPolicyTests.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        ConnectionPolicyTests.cycle(&ramp, rate: 40e6, now: &now, received: &received)
        #expect(ramp.target == 8 && ramp.learned == nil, "only its starting count was measured")
        ConnectionPolicyTests.cycle(&ramp, rate: 70e6, now: &now, received: &received)
        #expect(ramp.target == 12 && ramp.learned == .init(connections: 8, refused: false))
        ConnectionPolicyTests.cycle(&ramp, rate: 71e6, now: &now, received: &received)
        #expect(ramp.phase.isHolding && ramp.learned == .init(connections: 8, refused: false))

        var refused = ConnectionPolicy(configuration: ConnectionPolicyTests.configuration, now: now)
        ConnectionPolicyTests.cycle(&refused, rate: 40e6, now: &now, received: &received)
        _ = refused.refused(now: now, accepted: 6)
        #expect(refused.learned == .init(connections: 6, refused: true))

        var limited = ConnectionPolicy(configuration: ConnectionPolicyTests.configuration, now: now)
        ConnectionPolicyTests.cycle(&limited, rate: 9.8e6, now: &now, received: &received, rateLimit: 10e6)
        #expect(limited.reason == .rateLimit && limited.learned == nil)
    }
}
