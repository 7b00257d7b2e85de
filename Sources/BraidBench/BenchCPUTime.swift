#if canImport(Glibc)
    import Glibc
#endif

/// The CPU time this process has used, user plus system: runs are sequential, so the difference around one run
/// is that run's cost, the engine's threads included.
enum BenchCPUTime {
    /// User plus system CPU seconds since the process started.
    static func now() -> Double {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return 0 }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
