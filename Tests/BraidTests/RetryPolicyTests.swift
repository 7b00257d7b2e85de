import Foundation
import Testing

@testable import Braid

/// Backoff, the classification of HTTP errors, and the two forms of `Retry-After`.
@Suite("RetryPolicy")
struct RetryPolicyTests {
    // MARK: - Backoff

    @Test(
        "The backoff doubles with each attempt from the base delay",
        arguments: [(1, 0.25), (2, 0.5), (3, 1.0), (4, 2.0), (7, 16.0)]
    )
    func exponentialBackoff(attempt: Int, backoff: Double) {
        let policy = RetryPolicy()
        #expect(policy.delay(afterAttempt: attempt, retryAfter: nil, random: 1) == backoff)
        #expect(policy.delay(afterAttempt: attempt, retryAfter: nil, random: 0) == backoff / 2)
    }

    @Test("Jitter keeps every delay within half to all of the backoff")
    func jitterBounds() {
        let policy = RetryPolicy()
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<1000 {
            let attempt = Int.random(in: 1...12, using: &generator)
            let random = Double.random(in: 0...1, using: &generator)
            let backoff = min(policy.maximumDelay, policy.baseDelay * pow(2, Double(attempt - 1)))
            let delay = policy.delay(afterAttempt: attempt, retryAfter: nil, random: random)
            #expect(delay >= backoff * 0.5 && delay <= backoff, "attempt \(attempt), random \(random)")
        }
    }

    @Test("The backoff is capped at maximumDelay, even after absurdly many attempts", arguments: [8, 9, 50, 5000])
    func capped(attempt: Int) {
        let policy = RetryPolicy()
        #expect(policy.delay(afterAttempt: attempt, retryAfter: nil, random: 1) == 30)
        #expect(policy.delay(afterAttempt: attempt, retryAfter: nil, random: 0) == 15)
    }

    @Test("Attempt 0 or below is treated as the first attempt", arguments: [0, -1])
    func nonPositiveAttempt(attempt: Int) {
        #expect(RetryPolicy().delay(afterAttempt: attempt, retryAfter: nil, random: 1) == 0.25)
    }

    @Test(
        "Retry-After wins over the backoff, up to maximumRetryAfter",
        arguments: [(0, 0), (3, 3), (120, 120), (301, 300)])
    func retryAfterWins(retryAfter: Double, delay: Double) {
        let policy = RetryPolicy()
        #expect(policy.delay(afterAttempt: 5, retryAfter: retryAfter, random: 0) == delay)
        #expect(policy.delay(afterAttempt: 1, retryAfter: retryAfter, random: 1) == delay)
    }

    // MARK: - Classifying HTTP errors

    @Test("429 and 503 are transient and mean the server refuses more connections", arguments: [429, 503])
    func busyIsTransientAndRefused(status: Int) {
        guard
            case let .transient(code, message, retryAfter, refused) = FailureKind.classify(
                status: status, retryAfter: "5", wallClock: 0)
        else {
            Issue.record("HTTP \(status) should be transient")
            return
        }
        #expect(code == .protocolViolation)
        #expect(message.contains("\(status)"))
        #expect(retryAfter == 5)
        #expect(refused)
    }

    @Test("Server errors and request timeouts are transient", arguments: [408, 500, 502, 504, 507, 599])
    func serverErrorsAreTransient(status: Int) {
        guard
            case let .transient(_, message, retryAfter, refused) = FailureKind.classify(
                status: status, retryAfter: nil, wallClock: 0)
        else {
            Issue.record("HTTP \(status) should be transient")
            return
        }
        #expect(message.contains("\(status)"))
        #expect(retryAfter == nil)
        #expect(!refused)
    }

    @Test("Missing files and refused access are fatal", arguments: [401, 403, 404, 410, 400, 405, 416, 451])
    func clientErrorsAreFatal(status: Int) {
        guard case let .fatal(code, message) = FailureKind.classify(status: status, retryAfter: "1", wallClock: 0)
        else {
            Issue.record("HTTP \(status) should be fatal")
            return
        }
        #expect(code == .protocolViolation)
        #expect(message.contains("\(status)"))
    }

    @Test("An unparseable Retry-After is ignored, not fatal")
    func garbageRetryAfter() {
        #expect(
            FailureKind.classify(status: 503, retryAfter: "soon", wallClock: 0)
                == .transient(
                    .protocolViolation, "the server answered 503 (busy)", retryAfter: nil, refusedConnection: true)
        )
    }

    // MARK: - Retry-After

    /// 2015-10-21 07:28:00 UTC, the date of RFC 9110's example.
    static let now: Double = 1_445_412_480

    @Test(
        "Delta-seconds are read as they are",
        arguments: [("0", 0.0), ("120", 120), (" 7 ", 7), ("86400", 86_400)] as [(String, Double)]
    )
    func deltaSeconds(value: String, seconds: Double) {
        #expect(RetryAfter.seconds(value, wallClock: Self.now) == seconds)
    }

    @Test(
        "An HTTP-date is the time from now until then, and 0 once it has passed",
        arguments: [
            ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
            ("Wed, 21 Oct 2015 07:28:30 GMT", 30),
            ("Wed, 21 Oct 2015 08:28:00 GMT", 3600),
            ("Thu, 22 Oct 2015 07:28:00 GMT", 86_400),
            ("Tue, 20 Oct 2015 07:28:00 GMT", 0),
        ] as [(String, Double)]
    )
    func httpDate(value: String, seconds: Double) {
        #expect(RetryAfter.seconds(value, wallClock: Self.now) == seconds)
    }

    @Test(
        "Anything else is not a Retry-After",
        arguments: ["", "soon", "-5", "1.5", "0x10", "+5", "Wed, 32 Oct 2015 07:28:00 GMT"]
    )
    func garbage(value: String) {
        #expect(RetryAfter.seconds(value, wallClock: Self.now) == nil)
    }

    @Test(
        "Delta-seconds past every integer type are a very long wait, not a missing one",
        arguments: ["9223372036854775807", "9223372036854775808", "99999999999999999999999"]
    )
    func hugeDeltaSeconds(value: String) throws {
        let seconds = try #require(RetryAfter.seconds(value, wallClock: Self.now))
        #expect(seconds >= 9.2e18)
    }

    @Test("A first contact fails at once on a name that does not resolve, and after one retry on a refused connection")
    func firstContact() {
        let policy = RetryPolicy(maximumAttempts: 6)
        #expect(policy.attemptsForFirstContact(after: .nameNotResolved) == 1)
        #expect(policy.attemptsForFirstContact(after: .couldNotConnect) == 2)
        #expect(RetryPolicy(maximumAttempts: 1).attemptsForFirstContact(after: .couldNotConnect) == 1)
        #expect(policy.attemptsForFirstContact(after: .connectionBroken) == 6)
        #expect(policy.attemptsForFirstContact(after: nil) == 6, "an HTTP status is not a failure below HTTP")
    }
}
