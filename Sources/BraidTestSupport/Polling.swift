/// Waiting for something outside the test to happen, without fixed sleeps.
///
/// Loopback servers and child processes usually take milliseconds and occasionally, on a loaded two-core CI
/// machine, seconds; polling a condition against a generous deadline is fast in the first case and correct
/// in the second.
public enum Polling {
    /// A deadline for what takes milliseconds on an idle machine: when a full run starts, every test starts at once
    /// on a two-core machine, and a test's task may not run again for tens of seconds.
    public static let patience = Duration.seconds(60)

    /// Checks `condition` every `interval` until it returns `true`.
    ///
    /// - Parameters:
    ///   - what: what is being waited for, for the timeout message ("nginx to answer").
    ///   - evidence: output worth quoting if the deadline passes (a child's stderr, a log).
    /// - Throws: `TestSupportError.timedOut` after `timeout`, or whatever `condition` throws.
    public static func until(
        _ what: String,
        timeout: Duration,
        interval: Duration = .milliseconds(10),
        evidence: () -> String = { "" },
        condition: () throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            if try condition() { return }
            guard ContinuousClock.now < deadline else {
                throw TestSupportError.timedOut(what, after: timeout, evidence: evidence())
            }
            try await Task.sleep(for: interval)
        }
    }
}
