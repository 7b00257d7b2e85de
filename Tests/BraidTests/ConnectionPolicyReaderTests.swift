import Testing

@testable import Braid

/// `-n auto` where braid itself is the bottleneck: the thread that reads the connections is hardly ever idle, so more
/// connections could not be read faster.
@Suite("ConnectionPolicy: a busy reader")
struct ConnectionPolicyReaderTests {
    /// A policy fed samples every 0.1 s, each with the share of it the reading thread was idle.
    struct Driver {
        var policy: ConnectionPolicy
        var now = 0.0
        var received: Int64 = 0
        var readerIdle = 0.0

        /// One settle-and-measure cycle at `rate` bytes a second, the reader waiting `idle` of the time; returns
        /// whether the count changed at its end.
        @discardableResult
        mutating func cycle(rate: Double, idle: Double) -> Bool {
            for _ in 0..<20 {
                now += 0.1
                received += Int64(rate * 0.1)
                readerIdle += idle * 0.1
                let changed = policy.sample(
                    now: now, receivedTotal: received, active: policy.target, rateLimit: nil, readerIdle: readerIdle)
                if changed { return true }
                if policy.phase.isHolding { return false }
            }
            return false
        }
    }

    @Test("a reader idle less than 5 % of the first window keeps the count it measured, and says why")
    func holdsTheFirstCount() {
        var busy = Driver(policy: ConnectionPolicy(configuration: ConnectionPolicyTests.configuration, now: 0))
        let changed = busy.cycle(rate: 1.5e9, idle: 0.02)
        #expect(!changed)
        #expect(busy.policy.target == 4 && busy.policy.phase.isHolding)
        #expect(busy.policy.reason == .readerBusy(idlePercent: 2))
        #expect(
            "\(busy.policy.reason)"
                == "braid reads as fast as it can (its thread was idle 2% of the time): more would not help")
        #expect(busy.policy.learned == .init(connections: 4, refused: false), "a decision measured: it is learned")

        // 5 % idle could still give 5 % more: the boundary is idle / (1 - idle) = the minimum gain.
        var waiting = Driver(policy: ConnectionPolicy(configuration: ConnectionPolicyTests.configuration, now: 0))
        let stepped = waiting.cycle(rate: 1.5e9, idle: 0.05)
        #expect(stepped)
        #expect(waiting.policy.target == 8, "a reader that waits 5 % of the time may still gain 5 %")
    }

    @Test("where first bytes are slow, a reader busy over half a window is judged on the whole window")
    func busyReaderWaitsForTheWholeWindow() {
        var driver = Driver(policy: ConnectionPolicy(configuration: ConnectionPolicyTests.configuration, now: 0))
        for _ in 0..<4 { driver.policy.firstByte(after: 0.2) }
        driver.cycle(rate: 40e6, idle: 0.5)
        #expect(driver.policy.target == 8)
        let stepped = driver.now
        // A 150 % gain would decide at the window's middle, but not with a reader idle 1 % of the time.
        let changed = driver.cycle(rate: 100e6, idle: 0.01)
        #expect(!changed && driver.policy.target == 8 && driver.policy.reason == .readerBusy(idlePercent: 1))
        #expect(driver.now - stepped >= 0.7, "settling 0.2 s and a whole window of 0.5 s: \(driver.now - stepped)")
    }

    @Test("a step that paid but left the reader busy is kept, and no more are tried; a later recheck may add")
    func keepsAPayingStep() {
        var driver = Driver(policy: ConnectionPolicy(configuration: ConnectionPolicyTests.configuration, now: 0))
        driver.cycle(rate: 400e6, idle: 0.5)
        #expect(driver.policy.target == 8)
        let changed = driver.cycle(rate: 700e6, idle: 0.01)
        #expect(!changed)
        #expect(driver.policy.target == 8, "8 gained 75 %, and the reader is busy: more cannot be read")
        #expect(driver.policy.reason == .readerBusy(idlePercent: 1))
        #expect(driver.policy.settled == 8)

        // The recheck measures 8 again; with the reader waiting again (a slower disk caught up), it steps on.
        driver.now += ConnectionPolicy.Configuration(ceiling: 64).recheckInterval
        let rechecked = driver.cycle(rate: 700e6, idle: 0.4)
        #expect(rechecked)
        #expect(driver.policy.target == 12)
    }

    @Test("a step that did not pay is undone as before, whatever the reader did")
    func undoesAStepThatDidNotPay() {
        var driver = Driver(policy: ConnectionPolicy(configuration: ConnectionPolicyTests.configuration, now: 0))
        driver.cycle(rate: 400e6, idle: 0.3)
        let undone = driver.cycle(rate: 300e6, idle: 0.0)
        #expect(undone)
        #expect(driver.policy.target == 2, "8 lost 25 %, so 4 comes back and half as many are tried")
        #expect(driver.policy.reason == .didNotPay(tried: 8, percent: -25))
    }

    @Test("without a measure of the reader's waits, it decides from throughput alone")
    func withoutWaits() {
        var policy = ConnectionPolicy(configuration: ConnectionPolicyTests.configuration, now: 0)
        var now = 0.0
        var received: Int64 = 0
        let changed = ConnectionPolicyTests.cycle(&policy, rate: 1.5e9, now: &now, received: &received)
        #expect(changed)
        #expect(policy.target == 8)
    }
}
