import Testing

@testable import Braid

/// Which phase a policy is in, for the expectations.
extension ConnectionPolicy.Phase {
    var isOpening: Bool { if case .opening = self { true } else { false } }
    var isSettling: Bool { if case .settling = self { true } else { false } }
    var isHolding: Bool { if case .holding = self { true } else { false } }
}

/// The `-n auto` policy, rule by rule, fed throughput samples and server answers with the time.
@Suite("ConnectionPolicy")
struct ConnectionPolicyTests {
    static let configuration = ConnectionPolicy.Configuration(ceiling: 64)

    /// Drives `policy` through one settle-and-measure cycle at `rate` bytes a second with every connection
    /// running; returns whether the count changed at its end.
    @discardableResult
    static func cycle(
        _ policy: inout ConnectionPolicy, rate: Double, now: inout Double, received: inout Int64,
        rateLimit: Double? = nil
    ) -> Bool {
        var changed = false
        for _ in 0..<20 {
            now += 0.1
            received += Int64(rate * 0.1)
            changed = policy.sample(now: now, receivedTotal: received, active: policy.target, rateLimit: rateLimit)
            if changed { return true }
            if policy.phase.isHolding { return false }
        }
        return changed
    }

    @Test("it starts with a few connections and adds more while each step pays, after a linear one 16 times as many")
    func rampsUpWhilePaying() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        #expect(policy.target == 4)
        // Each connection is capped at 10 MB/s: every step adds as much as it costs. 8 scaled linearly: the next
        // step goes to the ceiling, in waves (each starts once the last one's connections receive): 12, then 64, as
        // 48 would come within a quarter of it.
        for expected in [8, 12, 64] {
            let changed1 = Self.cycle(&policy, rate: Double(policy.target) * 10e6, now: &now, received: &received)
            #expect(changed1)
            #expect(policy.target == expected)
        }
        let changed2 = Self.cycle(&policy, rate: 640e6, now: &now, received: &received)
        #expect(!changed2)
        #expect(policy.target == 64)
        #expect(policy.reason == .ceiling, "it never goes past the ceiling")
    }

    @Test("a step that gains less than 5 % is undone, and the count held")
    func stepsBackWhenNotPaying() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        Self.cycle(&policy, rate: 400e6, now: &now, received: &received)
        #expect(policy.target == 8)
        Self.cycle(&policy, rate: 600e6, now: &now, received: &received)
        #expect(policy.target == 12, "above 8 it adds half as many again unless the last step scaled linearly")
        let changed3 = Self.cycle(&policy, rate: 620e6, now: &now, received: &received)
        #expect(changed3)
        #expect(policy.target == 8, "12 gained only 3 % over 8")
        #expect(policy.reason == .didNotPay(tried: 12, percent: 3))
        #expect(policy.phase.isHolding, "expected to hold, got \(policy.phase)")
    }

    @Test("a total cap reached by 4 connections keeps it at 4")
    func totalCap() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        Self.cycle(&policy, rate: 40e6, now: &now, received: &received)
        #expect(policy.target == 8)
        Self.cycle(&policy, rate: 40.5e6, now: &now, received: &received)
        #expect(policy.target == 4)
    }

    @Test("a step that gained under 25 % while the first byte came much later is undone; a strong gain is kept")
    func slowerFirstByte() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        now += 0.35
        _ = policy.sample(now: now, receivedTotal: received, active: 4, rateLimit: nil)
        for _ in 0..<4 { policy.firstByte(after: 0.04) }
        Self.cycle(&policy, rate: 100e6, now: &now, received: &received)
        #expect(policy.target == 8)
        now += 0.35
        _ = policy.sample(now: now, receivedTotal: received, active: 8, rateLimit: nil)
        for _ in 0..<8 { policy.firstByte(after: 0.5) }
        let changed4 = Self.cycle(&policy, rate: 115e6, now: &now, received: &received)
        #expect(changed4)
        #expect(policy.target == 4)
        #expect(policy.reason == .slowerFirstByte(tried: 8))
        var strong = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var strongNow = 0.25
        var strongReceived: Int64 = 0
        _ = strong.sample(now: strongNow, receivedTotal: 0, active: 4, rateLimit: nil)
        for _ in 0..<4 { strong.firstByte(after: 0.04) }
        Self.cycle(&strong, rate: 100e6, now: &strongNow, received: &strongReceived)
        strongNow += 0.25
        _ = strong.sample(now: strongNow, receivedTotal: strongReceived, active: 8, rateLimit: nil)
        for _ in 0..<8 { strong.firstByte(after: 0.5) }
        Self.cycle(&strong, rate: 190e6, now: &strongNow, received: &strongReceived)
        #expect(strong.target == 12, "a 90 % gain is kept however late the first byte")
    }

    @Test("a refusal drops the count to what the server accepted, and caps it there for a while")
    func refusal() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        Self.cycle(&policy, rate: 100e6, now: &now, received: &received)
        Self.cycle(&policy, rate: 200e6, now: &now, received: &received)
        #expect(policy.target == 12)
        let changed5 = policy.refused(now: now, accepted: 8)
        #expect(changed5)
        #expect(policy.target == 8 && policy.reason == .refused)
        #expect(policy.ceiling(now: now + 30) == 8)
        // After the cool-down it measures again and may try more.
        now += 61
        #expect(policy.ceiling(now: now) == 64)
        _ = policy.sample(now: now, receivedTotal: received, active: 8, rateLimit: nil)
        let changed6 = Self.cycle(&policy, rate: 200e6, now: &now, received: &received)
        #expect(changed6)
        #expect(policy.target == 12)
    }

    @Test("no connection is added that the rate limit could not use")
    func rateLimit() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        let changed7 = Self.cycle(&policy, rate: 9.8e6, now: &now, received: &received, rateLimit: 10e6)
        #expect(!changed7)
        #expect(policy.target == 4 && policy.reason == .rateLimit)
    }

    @Test("while holding it tries one step more now and then, so a link that got faster gets more")
    func recheck() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        Self.cycle(&policy, rate: 100e6, now: &now, received: &received)
        Self.cycle(&policy, rate: 101e6, now: &now, received: &received)
        #expect(policy.target == 4)
        now += 14
        let changed8 = policy.sample(now: now, receivedTotal: received, active: 4, rateLimit: nil)
        #expect(!changed8)
        now += 1.1
        _ = policy.sample(now: now, receivedTotal: received, active: 4, rateLimit: nil)
        // Measured again at 4, then a step to 8, which now pays.
        let changed9 = Self.cycle(&policy, rate: 100e6, now: &now, received: &received)
        #expect(changed9)
        #expect(policy.target == 8)
        Self.cycle(&policy, rate: 190e6, now: &now, received: &received)
        #expect(policy.target == 12)
    }

    @Test("the ceiling is 64 on this machine and 16 elsewhere")
    func ceilings() {
        #expect(ConnectionPolicy.defaultCeiling(host: "127.0.0.1") == 64)
        #expect(ConnectionPolicy.defaultCeiling(host: "[::1]") == 64)
        #expect(ConnectionPolicy.defaultCeiling(host: "LOCALHOST") == 64)
        #expect(ConnectionPolicy.defaultCeiling(host: "mirror.example") == 16)
        var policy = ConnectionPolicy(configuration: .init(ceiling: 2), now: 0)
        var now = 0.0
        var received: Int64 = 0
        #expect(policy.target == 2)
        let changed10 = Self.cycle(&policy, rate: 1e6, now: &now, received: &received)
        #expect(!changed10)
        #expect(policy.reason == .ceiling)
    }
}

@Suite("ConnectionPolicy: costly requests")
struct ConnectionPolicyPieceTests {
    /// A policy whose four first requests were answered after `firstByte` seconds, and that then measured `rate`
    /// bytes a second.
    static func measured(firstByte: Double, rate: Double) -> ConnectionPolicy {
        var policy = ConnectionPolicy(configuration: ConnectionPolicyTests.configuration, now: 0)
        var now = 0.35
        var received: Int64 = 0
        _ = policy.sample(now: now, receivedTotal: received, active: 4, rateLimit: nil)
        for _ in 0..<4 { policy.firstByte(after: firstByte) }
        ConnectionPolicyTests.cycle(&policy, rate: rate, now: &now, received: &received)
        return policy
    }

    @Test("when the first byte takes long, requests grow to twenty times what a connection gets meanwhile")
    func piecesGrow() {
        let policy = Self.measured(firstByte: 0.1, rate: 40e6)
        // 10 MB/s per connection, 0.1 s to the first byte: 1 MB waited for, 20 MB a request.
        #expect(policy.pieceBytes == 20_000_000)
    }

    @Test("cheap requests leave the plan's pieces as they are")
    func cheapRequests() {
        let policy = Self.measured(firstByte: 0.0005, rate: 400e6)
        #expect(policy.pieceBytes == nil)
    }
}

extension ConnectionPolicyPieceTests {
    @Test("before any first byte, the first four requests share the file, at most 16 MiB each")
    func firstRound() {
        var policy = ConnectionPolicy(configuration: ConnectionPolicyTests.configuration, now: 0)
        #expect(policy.pieceSize(totalLength: 32 << 20) == 8 << 20)
        #expect(policy.pieceSize(totalLength: 1 << 30) == 16 << 20)
        policy.firstByte(after: 0.0005)
        #expect(policy.pieceSize(totalLength: 32 << 20) == 8 << 20, "no rate sampled yet")
        _ = policy.sample(now: 0.1, receivedTotal: 0, active: 4, rateLimit: nil)
        _ = policy.sample(now: 0.2, receivedTotal: 40_000_000, active: 4, rateLimit: nil)
        #expect(policy.pieceSize(totalLength: 64 << 20) == nil, "cheap requests: the plan's pieces")
    }
}

extension ConnectionPolicyTests {
    @Test("a measurement during which fewer connections ran than the count says nothing: the count is held")
    func notEnoughWork() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        Self.cycle(&policy, rate: 100e6, now: &now, received: &received)
        #expect(policy.target == 8)
        // Only 5 of the 8 get work, and the throughput drops as the file's end nears.
        for _ in 0..<40 {
            now += 0.1
            received += 5_000_000
            _ = policy.sample(now: now, receivedTotal: received, active: 5, rateLimit: nil)
        }
        #expect(policy.target == 8)
        #expect(policy.reason == .notEnoughWork)
    }
}

extension ConnectionPolicyPieceTests {
    @Test("costly requests are each connection's share of what is left, among the count (the scheduler cuts them)")
    func piecesAreShares() {
        let policy = Self.measured(firstByte: 1.0, rate: 40e6)
        #expect(policy.pieceBytes == 200_000_000)
        #expect(policy.pieceSize(totalLength: 48 << 20) == .max)
        #expect(policy.sharingCount == policy.target, "no distant start configured: the count itself")
    }
}

extension ConnectionPolicyTests {
    @Test("the count it settled on is the best one measured while a step is still being tried")
    func settled() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        #expect(policy.settled == 4)
        Self.cycle(&policy, rate: 40e6, now: &now, received: &received)
        Self.cycle(&policy, rate: 70e6, now: &now, received: &received)
        #expect(policy.target == 12)
        #expect(policy.settled == 8, "12 is being tried; 8 is the best measured")
        Self.cycle(&policy, rate: 71e6, now: &now, received: &received)
        #expect(policy.target == 8 && policy.settled == 8)
    }
}

@Suite("ConnectionPolicy: pace and fewer connections")
struct ConnectionPolicyPaceTests {
    static let configuration = ConnectionPolicyTests.configuration

    /// Feeds samples every `step` seconds at `rate` bytes a second, with every connection of the count running and
    /// receiving, until the count changes or `seconds` pass; returns when it changed, or nil.
    static func run(
        _ policy: inout ConnectionPolicy, rate: Double, for seconds: Double, step: Double = 0.01,
        now: inout Double, received: inout Int64
    ) -> Double? {
        let end = now + seconds
        while now < end - 1e-9 {
            now += step
            received += Int64(rate * step)
            if policy.sample(now: now, receivedTotal: received, active: policy.target, rateLimit: nil) { return now }
        }
        return nil
    }

    @Test("on a near server a step takes a tenth of a second: settling and one window")
    func quickSteps() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        policy.firstByte(after: 0.001)
        let changed = Self.run(&policy, rate: 40e6, for: 1, now: &now, received: &received)
        #expect(policy.target == 8)
        #expect((changed ?? 9) <= 0.1, "settle 0.02 s, measure 0.05 s: changed at \(changed ?? -1)")
    }

    @Test("a far server's pace: it settles for its quickest first byte, and the window lasts two and a half")
    func slowerPace() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        for _ in 0..<4 { policy.firstByte(after: 0.2) }
        let changed = Self.run(&policy, rate: 40e6, for: 3, now: &now, received: &received)
        #expect(policy.target == 8)
        // Settling 0.2 s (the first byte's 0.2), then a window of 0.5 s (two and a half times 0.2).
        #expect((changed ?? 0) >= 0.7 && (changed ?? 9) < 0.8, "changed at \(changed ?? -1)")
    }

    @Test("where first bytes are slow, a step that gains 25 % or more is decided at half its window, a small gain not")
    func clearGainDecidedEarly() {
        for (rate, linear) in [(100e6, true), (44e6, false)] {
            var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
            var now = 0.0
            var received: Int64 = 0
            for _ in 0..<4 { policy.firstByte(after: 0.2) }
            _ = Self.run(&policy, rate: 40e6, for: 3, now: &now, received: &received)
            #expect(policy.target == 8)
            // 8 settle for 0.2 s, then a window of 0.5 s: a 150 % gain decides at its middle, a 10 % one at its end.
            let stepped = now
            let changed = (Self.run(&policy, rate: rate, for: 3, now: &now, received: &received) ?? 9) - stepped
            if linear {
                #expect(policy.target == 12 && policy.waveGoal == 64)
                #expect(changed >= 0.45 && changed < 0.5, "decided \(changed) s after the step")
            } else {
                #expect(policy.target == 12 && policy.waveGoal == nil)
                #expect(changed >= 0.7 && changed < 0.75, "decided \(changed) s after the step")
            }
        }
    }

    @Test("a new count is measured only once its new connections receive")
    func waitsForNewConnections() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        policy.firstByte(after: 0.001)
        _ = Self.run(&policy, rate: 40e6, for: 1, now: &now, received: &received)
        #expect(policy.target == 8)
        // The 4 new connections are still connecting for half a second: 8 run, 4 receive.
        let stepped = now
        while now < stepped + 0.5 {
            now += 0.01
            received += Int64(40e6 * 0.01)
            _ = policy.sample(now: now, receivedTotal: received, active: 8, receiving: 4, rateLimit: nil)
        }
        #expect(policy.phase.isSettling, "expected to settle while new connections have no bytes, got \(policy.phase)")
        // Then they receive, and the 8 are measured: they pay.
        let changed = Self.run(&policy, rate: 80e6, for: 1, now: &now, received: &received)
        #expect(policy.target == 12)
        #expect((changed ?? 9) - stepped < 0.65)
    }

    @Test("a step that does not pay is undone only after a longer measurement")
    func confirmsFewer() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        policy.firstByte(after: 0.001)
        _ = Self.run(&policy, rate: 100e6, for: 1, now: &now, received: &received)
        #expect(policy.target == 8)
        let stepped = now
        let changed = Self.run(&policy, rate: 102e6, for: 1, now: &now, received: &received)
        #expect(policy.target == 4)
        #expect((changed ?? 0) - stepped >= 0.25, "one window (0.05 s) is not enough to decide for fewer")
        #expect(policy.reason == .didNotPay(tried: 8, percent: 2))
        #expect(
            policy.phase.isHolding, "a step that gained a little is not followed by fewer connections: \(policy.phase)")
    }

    @Test("a step that lost more than 10 % is undone after one window, without the longer measurement")
    func clearLossUndoneAtOnce() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        policy.firstByte(after: 0.001)
        _ = Self.run(&policy, rate: 100e6, for: 1, now: &now, received: &received)
        #expect(policy.target == 8)
        let stepped = now
        let changed = Self.run(&policy, rate: 85e6, for: 1, now: &now, received: &received)
        #expect(policy.target == 2, "4 comes back, and as 8 lost, half as many are tried")
        #expect(policy.reason == .didNotPay(tried: 8, percent: -15))
        #expect((changed ?? 9) - stepped < 0.2, "settled and measured once, not for 0.25 s")
    }

    @Test("a step that lost throughput is followed by half as many, kept while they do as well")
    func fewerDoAsWell() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        policy.firstByte(after: 0.001)
        // The CPU is the bottleneck: 1 connection gets 1000 MB/s, 2 get 990, 4 get 800, 8 get 700.
        let rates = [1: 1000e6, 2: 990e6, 4: 800e6, 8: 700e6]
        var counts: [Int] = []
        for _ in 0..<10 {
            let changed = Self.run(&policy, rate: rates[policy.target]!, for: 2, now: &now, received: &received)
            guard changed != nil else { break }
            counts.append(policy.target)
        }
        #expect(counts == [8, 2, 1], "up to 8, which lost; then 4's half, 2, and 1, as each did as well")
        #expect(policy.target == 1 && policy.settled == 1)
        #expect(policy.reason == .fewerDidAsWell(percent: 1))
    }

    @Test("a try with fewer that loses brings the best count back")
    func fewerLose() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        policy.firstByte(after: 0.001)
        let rates = [2: 500e6, 4: 800e6, 8: 700e6]
        var counts: [Int] = []
        for _ in 0..<10 {
            let changed = Self.run(&policy, rate: rates[policy.target]!, for: 2, now: &now, received: &received)
            guard changed != nil else { break }
            counts.append(policy.target)
        }
        #expect(counts == [8, 2, 4], "8 lost, then 4's half lost too: back to 4")
        #expect(policy.reason == .fewerLost(tried: 2, percent: 38))
        #expect(policy.settled == 4)
    }
}

extension ConnectionPolicyPaceTests {
    @Test("first bytes slowed by a stalled start lengthen the pace only up to half a second and one second")
    func paceIsBounded() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        // The four first requests waited 12 s for their first bytes (a machine busy with other work).
        for _ in 0..<4 { policy.firstByte(after: 12) }
        let changed = Self.run(&policy, rate: 40e6, for: 5, now: &now, received: &received)
        #expect(policy.target == 8)
        #expect((changed ?? 99) <= 1.55, "settling 0.5 s, measuring 1 s: changed at \(changed ?? -1)")
    }

    @Test("a window whose halves disagree by more than 10 % is doubled before it decides")
    func noisyWindowGrows() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var received: Int64 = 0
        policy.firstByte(after: 0.001)
        var changed: Double?
        // 20 MB/s and 60 MB/s by turns, 25 ms each: the first window (0.025 to 0.075 s) sees 60 then 20.
        for tick in 1...100 where changed == nil {
            let now = Double(tick) * 0.005
            received += (tick - 1) / 5 % 2 == 0 ? 100_000 : 300_000
            if policy.sample(now: now, receivedTotal: received, active: policy.target, rateLimit: nil) {
                changed = now
            }
        }
        #expect(policy.target == 8)
        // Settled at 0.025 s; the 50 ms window's halves disagree, the 100 ms one's agree: it ends at 0.125 s.
        #expect(abs((changed ?? 9) - 0.125) < 1e-9, "changed at \(changed ?? -1)")
    }
}

@Suite("ConnectionPolicy: the opening request")
struct ConnectionPolicyOpeningTests {
    static let configuration = ConnectionPolicy.Configuration(opensAlone: true, ceiling: 64)

    @Test("one request opens alone, for at most 64 MiB, until its first byte; it is measured alone, then four start")
    func opensAlone() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        #expect(policy.target == 1 && policy.settled == 1)
        #expect(policy.pieceSize(totalLength: 1 << 30) == 64 << 20)
        #expect(policy.pieceSize(totalLength: 40 << 20) == 40 << 20, "a small file in one request")
        let beforeFirstByte = policy.sample(now: 0.03, receivedTotal: 0, active: 1, rateLimit: nil)
        policy.firstByte(after: 0.05)
        let atFirstByte = policy.sample(now: 0.05, receivedTotal: 0, active: 1, rateLimit: nil)
        #expect(!beforeFirstByte && !atFirstByte)
        #expect(policy.target == 1)
        // Ready at the next sample (0.06 s), settling for the first byte (0.05 s), then a window of two and a half
        // (0.125 s), at 10 MB/s.
        var changed: Double?
        for tick in 6...60 where changed == nil {
            let now = Double(tick) * 0.01
            if policy.sample(now: now, receivedTotal: Int64(tick - 5) * 100_000, active: 1, rateLimit: nil) {
                changed = now
            }
        }
        #expect(abs((changed ?? 9) - 0.24) < 0.005, "changed at \(changed ?? -1)")
        #expect(policy.target == 4 && policy.reason == .starting)
        #expect(policy.phase.isSettling, "the four settle before they are measured: \(policy.phase)")
    }

    @Test("where four do no better than the one (a total cap, a busy CPU), it goes back to one")
    func oneDoesAsWell() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        policy.firstByte(after: 0.001)
        let first = ConnectionPolicyPaceTests.run(&policy, rate: 40e6, for: 1, now: &now, received: &received)
        #expect(first != nil && policy.target == 4)
        let second = ConnectionPolicyPaceTests.run(&policy, rate: 40e6, for: 2, now: &now, received: &received)
        #expect(second != nil && policy.target == 1)
        #expect(policy.reason == .didNotPay(tried: 4, percent: 0))
        #expect(policy.phase.isHolding, "one connection is held: \(policy.phase)")
    }

    @Test("a download done during the opening settled on one connection; a refusal does not end the opening")
    func doneAlone() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        let changed = policy.refused(now: 0.01, accepted: 0)
        #expect(!changed)
        #expect(policy.target == 1)
        #expect(policy.phase.isOpening, "the refused opening request is retried alone: \(policy.phase)")
        policy.firstByte(after: 0.05)
        _ = policy.sample(now: 0.06, receivedTotal: 64 << 20, active: 1, rateLimit: nil)
        #expect(policy.settled == 1)
    }
}
