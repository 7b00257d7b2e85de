import Braid

/// What a ``BenchRunner`` tells as it goes, in this order: warnings, then ``willMeasure(bytesPerRun:)`` once, then
/// for each run ``runStarted(_:)``, the run's download events and ``runFinished(_:)``.
///
/// Calls come from the runner's task and from the tasks that read download events, one call at a time for a run.
public protocol BenchObserver: Sendable {
    /// A warning or remark before the runs: load on a server that is not on loopback, counts that cannot all be
    /// used, a server that does not serve byte ranges.
    func warn(_ message: String)

    /// The probe is done and the measured runs are about to start; each fetches `bytesPerRun` bytes, `nil` when
    /// neither the resource's length nor a byte limit is known.
    func willMeasure(bytesPerRun: Int64?)

    /// A run is about to start.
    func runStarted(_ slot: BenchSchedule.Slot)

    /// An event of the running download (progress, notices, retries).
    func runEvent(_ event: DownloadEvent)

    /// A run finished and was measured.
    func runFinished(_ run: BenchRun)
}
