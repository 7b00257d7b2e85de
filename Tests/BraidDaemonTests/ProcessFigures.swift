import BraidTestSupport
import Foundation

/// What `/proc` says of a running process: CPU time and memory, to tell a daemon that spins or swells.
enum ProcessFigures {
    /// User plus system CPU seconds the process has used (`/proc/PID/stat`, fields 14 and 15).
    static func cpuSeconds(_ pid: pid_t) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        guard let nameEnd = stat.lastIndex(of: ")") else { throw DaemonTestError("unreadable /proc/\(pid)/stat") }
        // After the name come the fields from the third on: utime is the 14th, stime the 15th.
        let fields = stat[stat.index(after: nameEnd)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw DaemonTestError("unreadable /proc/\(pid)/stat: \(stat)")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The process's peak resident set size in bytes (`VmHWM` of `/proc/PID/status`).
    static func peakResidentBytes(_ pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        else { throw DaemonTestError("no VmHWM in /proc/\(pid)/status") }
        return kilobytes * 1024
    }

    /// How many sockets the process holds open (its descriptors that link to `socket:[…]`).
    static func openSockets(_ pid: pid_t) throws -> Int {
        let directory = "/proc/\(pid)/fd"
        return try FileManager.default.contentsOfDirectory(atPath: directory).count { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + name))?.hasPrefix("socket:")
                == true
        }
    }

    /// The share of one core the process used over `window`, measured from its CPU time before and after.
    static func coreShare(_ pid: pid_t, over window: Duration) async throws -> Double {
        let before = try cpuSeconds(pid)
        let start = ContinuousClock.now
        try await Task.sleep(for: window)  // the measurement window itself, not a wait for something to happen
        let elapsed = ContinuousClock.now - start
        return (try cpuSeconds(pid) - before) / elapsed.seconds
    }
}
