import Braid

/// Why a benchmark stopped before its end, with what it measured until then when it was interrupted.
public struct BenchFailure: Error, Sendable {
    /// The error that stopped it; an interruption says how many runs were done, since nothing is kept to resume.
    public var error: BraidError
    /// After an interruption, the report of the runs done before it, without a recommendation worth following:
    /// counts not yet measured in every round would skew it. `nil` when no run was done or for other errors.
    public var partialReport: BenchReport?

    /// A failure with `error`, and the runs done before it in `partialReport`.
    public init(error: BraidError, partialReport: BenchReport? = nil) {
        self.error = error
        self.partialReport = partialReport
    }
}
