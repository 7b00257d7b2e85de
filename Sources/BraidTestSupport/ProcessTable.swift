import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Other processes as Linux's /proc shows them, for tests that must check that a grandchild has ended.
public enum ProcessTable {
    /// Whether `pid` is a process that has not ended: neither gone nor a zombie waiting to be reaped (an orphan's
    /// reaper may be slow to come, or absent in a container).
    public static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let afterName = stat.range(of: ") ", options: .backwards)
        else { return false }
        return stat[afterName.upperBound...].first != "Z"
    }
}
