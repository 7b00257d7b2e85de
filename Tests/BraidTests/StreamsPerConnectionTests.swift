import Testing

@testable import Braid

@Suite("StreamsPerConnection")
struct StreamsPerConnectionTests {
    static let mebibyte: Int64 = 1 << 20
    static let window = StreamsPerConnection.window

    /// A lane that received at `rate` bytes a second with 8 requests running for a window, having started 8: the
    /// change to one request a connection it asks for.
    static func tried(rate: Int64) -> (StreamsPerConnection, Int?) {
        var learning = StreamsPerConnection(now: 10)
        #expect(learning.observe(now: 10, received: 0, running: 8, started: 8) == nil)
        #expect(learning.observe(now: 10 + window / 2, received: rate / 2, running: 8, started: 8) == nil)
        let change = learning.observe(
            now: 10 + window, received: Int64(Double(rate) * window), running: 8, started: 8)
        return (learning, change)
    }

    @Test("shared connections at first; after a window of receiving, a connection a request is tried")
    func triesAfterAWindow() {
        let (learning, change) = Self.tried(rate: Self.mebibyte)
        #expect(change == 1)
        #expect(learning.limit == 1)
        guard case let .trying(baseline, started, since, _) = learning.phase else {
            Issue.record("not trying: \(learning.phase)")
            return
        }
        #expect(abs(baseline - Double(Self.mebibyte)) < 1)
        #expect(started == 8)
        #expect(since == nil, "measured only from a request that can open a connection")
    }

    @Test("a faster rate with a connection a request keeps them, and it stays so")
    func keepsWhatIsFaster() {
        var (learning, _) = Self.tried(rate: Self.mebibyte)
        let at = 10 + Self.window
        let received = Int64(Double(Self.mebibyte) * Self.window)
        // No request started yet: the window has not begun, however long that takes.
        #expect(learning.observe(now: at + 5, received: received, running: 8, started: 8) == nil)
        #expect(learning.observe(now: at + 5.1, received: received, running: 8, started: 9) == nil)
        // Three times the rate over the window since the request started.
        let faster = received + Int64(3 * Double(Self.mebibyte) * Self.window)
        #expect(learning.observe(now: at + 5.1 + Self.window, received: faster, running: 8, started: 20) == nil)
        #expect(learning.phase == .settled)
        #expect(learning.limit == 1)
        // What the log tells of it: both rates.
        #expect(abs((learning.rates.shared ?? 0) - Double(Self.mebibyte)) < 1)
        #expect(abs((learning.rates.separate ?? 0) - 3 * Double(Self.mebibyte)) < 1)
        #expect(learning.observe(now: at + 100, received: faster, running: 8, started: 30) == nil)
        #expect(learning.limit == 1)
    }

    @Test("a rate no faster, or faster by less than the gain, puts the streams back on shared connections")
    func revertsWhatIsNotFaster() {
        for factor in [0.5, 1.0, StreamsPerConnection.gain * 0.98] {
            var (learning, _) = Self.tried(rate: Self.mebibyte)
            let at = 10 + Self.window
            let received = Int64(Double(Self.mebibyte) * Self.window)
            #expect(learning.observe(now: at + 0.1, received: received, running: 8, started: 9) == nil)
            let after = received + Int64(factor * Double(Self.mebibyte) * Self.window)
            let change = learning.observe(now: at + 0.1 + Self.window, received: after, running: 8, started: 12)
            #expect(change == StreamsPerConnection.unlimited, "factor \(factor)")
            #expect(learning.phase == .settled)
            #expect(learning.observe(now: at + 100, received: after * 10, running: 8, started: 99) == nil)
        }
    }

    @Test("with fewer than two requests running nothing is measured, and a refused try measures again")
    func measuresOnlyWhileBusy() {
        var learning = StreamsPerConnection(now: 0)
        // One request for a long time: no try.
        #expect(learning.observe(now: 10, received: 10 * Self.mebibyte, running: 1, started: 1) == nil)
        #expect(
            learning.observe(now: 10 + Self.window * 0.9, received: 11 * Self.mebibyte, running: 2, started: 2) == nil)
        #expect(learning.limit == StreamsPerConnection.unlimited)
        // Refused (the lane's other pool has connections open): shared still, and a window starts again.
        #expect(learning.observe(now: 20, received: 12 * Self.mebibyte, running: 4, started: 4) == 1)
        learning.refused(now: 20, received: 12 * Self.mebibyte, machine: nil)
        #expect(learning.limit == StreamsPerConnection.unlimited)
        #expect(learning.phase == .measuring(since: 20, received: 12 * Self.mebibyte, machine: nil))
        #expect(
            learning.observe(now: 20 + Self.window * 0.9, received: 13 * Self.mebibyte, running: 4, started: 4) == nil)
        #expect(
            learning.observe(now: 20 + Self.window * 1.1, received: 14 * Self.mebibyte, running: 4, started: 4) == 1)
        // A try whose requests drop to one measures again from the next time two run.
        #expect(learning.observe(now: 30, received: 15 * Self.mebibyte, running: 4, started: 5) == nil)
        #expect(
            learning.observe(now: 30 + Self.window * 0.5, received: 15 * Self.mebibyte, running: 1, started: 5) == nil)
        #expect(learning.observe(now: 40, received: 16 * Self.mebibyte, running: 3, started: 6) == nil)
        #expect(
            learning.observe(now: 40 + Self.window * 0.9, received: 30 * Self.mebibyte, running: 3, started: 7) == nil)
        #expect(learning.phase != .settled)
    }

    @Test("a window in which nothing came is no baseline")
    func nothingReceivedIsNoBaseline() {
        var learning = StreamsPerConnection(now: 0)
        #expect(learning.observe(now: 0.1, received: 0, running: 8, started: 8) == nil)
        #expect(learning.observe(now: 0.1 + Self.window * 2, received: 0, running: 8, started: 8) == nil)
        #expect(learning.limit == StreamsPerConnection.unlimited)
        guard case .measuring = learning.phase else {
            Issue.record("not measuring: \(learning.phase)")
            return
        }
    }

    @Test("what was learned holds through a short pause, and is forgotten after a long one")
    func forgetsAfterAnIdleWhile() {
        var (learning, _) = Self.tried(rate: Self.mebibyte)
        let at = 10 + Self.window
        let received = Int64(Double(Self.mebibyte) * Self.window)
        #expect(learning.observe(now: at + 0.1, received: received, running: 8, started: 9) == nil)
        let faster = received + Int64(3 * Double(Self.mebibyte) * Self.window)
        #expect(learning.observe(now: at + 0.1 + Self.window, received: faster, running: 8, started: 20) == nil)
        #expect(learning.limit == 1 && !learning.isLearning)

        let idle = at + 10
        #expect(
            learning.resume(
                idleSince: idle, now: idle + StreamsPerConnection.forgetsAfter * 0.9, received: faster, machine: nil)
                == nil)
        #expect(learning.limit == 1 && !learning.isLearning)
        let later = idle + StreamsPerConnection.forgetsAfter * 1.1
        #expect(
            learning.resume(idleSince: idle, now: later, received: faster, machine: nil)
                == StreamsPerConnection.unlimited)
        #expect(learning.isLearning)
        // Measured from what had come by then, not from nothing.
        #expect(learning.phase == .measuring(since: later, received: faster, machine: nil))
        // Forgetting a lane that shares its connections changes nothing to set.
        #expect(learning.resume(idleSince: later, now: later + 60, received: faster, machine: nil) == nil)
        #expect(learning.limit == StreamsPerConnection.unlimited)
    }

    @Test("a process that kept a quarter of the machine's CPUs busy is not tried, and is measured again")
    func busyProcessNotTried() {
        typealias Time = StreamsPerConnection.CPUTime
        // Two CPUs over 1.5 s: 3 s of CPU time a window.
        var learning = StreamsPerConnection(now: 0, machine: Time(total: 1_000, process: 10))
        // The process 60 %: busy with its own bytes (and, on loopback, its server with the rest).
        let busy = Time(total: 1_003, process: 11.8)
        #expect(
            learning.observe(now: Self.window, received: Self.mebibyte, running: 8, started: 8, machine: busy) == nil)
        #expect(learning.phase == .measuring(since: Self.window, received: Self.mebibyte, machine: busy))
        // The process 2 %, the machine near all busy with other work: tried.
        let capped = Time(total: 1_006, process: 11.86)
        #expect(
            learning.observe(now: 2 * Self.window, received: 2 * Self.mebibyte, running: 8, started: 8, machine: capped)
                == 1)
        let start = Time(total: 100, process: 0)
        #expect(StreamsPerConnection.isBusy(from: start, to: Time(total: 200, process: 25)))
        #expect(!StreamsPerConnection.isBusy(from: start, to: Time(total: 200, process: 24)))
        #expect(!StreamsPerConnection.isBusy(from: nil, to: Time(total: 200, process: 100)), "unknown")
    }
}
