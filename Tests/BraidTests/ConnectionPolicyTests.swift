import Testing

@testable import Braid

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
            if case .holding = policy.phase { return false }
        }
        return changed
    }

    @Test("it starts with a few connections and doubles them while each step pays")
    func rampsUpWhilePaying() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        #expect(policy.target == 4)
        // Each connection is capped at 10 MB/s: every step adds as much as it costs.
        for expected in [8, 16, 32, 64] {
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
        guard case .holding = policy.phase else {
            Issue.record("expected to hold, got \(policy.phase)")
            return
        }
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

    @Test("a step after which the first byte comes much later is undone, even if it paid")
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
        let changed4 = Self.cycle(&policy, rate: 130e6, now: &now, received: &received)
        #expect(changed4)
        #expect(policy.target == 4)
        #expect(policy.reason == .slowerFirstByte(tried: 8))
    }

    @Test("a refusal drops the count to what the server accepted, and caps it there for a while")
    func refusal() {
        var policy = ConnectionPolicy(configuration: Self.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        Self.cycle(&policy, rate: 100e6, now: &now, received: &received)
        Self.cycle(&policy, rate: 200e6, now: &now, received: &received)
        #expect(policy.target == 16)
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
        #expect(policy.target == 16)
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
