import Braid

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// When `braid bench` should warn before it starts: a benchmark is a burst of deliberate load, harmless on
/// loopback but worth a second thought against someone else's server.
public enum BenchAdvisory {
    /// More connections than this to a server that is not on loopback earn a warning.
    public static let connectionThreshold = 16
    /// More bytes than this in total (every run together) from a server not on loopback earn a warning.
    public static let totalBytesThreshold: Int64 = 4 << 30

    /// The warning for benchmarking `url` with up to `maximumConnections` connections, or `nil` when it is on
    /// loopback or within ``connectionThreshold``.
    public static func connectionWarning(url: String, maximumConnections: Int) -> String? {
        guard maximumConnections > connectionThreshold, let host = remoteHost(of: url) else { return nil }
        return "warning: \(host) is not on this machine, and up to \(maximumConnections) connections at once "
            + "(more than \(connectionThreshold)) may look like abuse to its operator; make sure you may"
    }

    /// The warning for fetching `totalBytes` over all runs from `url`, or `nil` when it is on loopback or within
    /// ``totalBytesThreshold``.
    public static func volumeWarning(url: String, totalBytes: Int64) -> String? {
        guard totalBytes > totalBytesThreshold, let host = remoteHost(of: url) else { return nil }
        return "warning: this benchmark fetches \(BenchFormat.bytes(totalBytes)) in total from \(host); "
            + "--bytes LIMIT measures with less"
    }

    /// The warning when `bytesPerRun` is too few to give each connection of the larger counts a range of its
    /// own (the engine never plans a range below its minimum size), or `nil` when every count can be used.
    public static func rangeWarning(bytesPerRun: Int64, connectionCounts: [Int]) -> String? {
        func ranges(_ connections: Int) -> Int {
            BenchPlanning.rangeCount(length: bytesPerRun, connections: connections, piecesPerConnection: 1)
        }
        let starved = connectionCounts.filter { ranges($0) < $0 }
        guard let first = starved.first else { return nil }
        let counts = starved.map(String.init).joined(separator: ", ")
        return "warning: \(BenchFormat.bytes(bytesPerRun)) per run splits into at most \(ranges(first)) ranges "
            + "(none smaller than \(BenchFormat.bytes(BenchPlanning.minimumRange))), so \(counts) connections "
            + "cannot all be used; a larger --bytes measures them"
    }

    /// The bytes a schedule fetches in total: each run fetches the resource's `length`, or `byteLimit` if
    /// smaller; `nil` when neither is known.
    public static func totalBytes(length: Int64?, byteLimit: Int64?, runs: Int) -> Int64? {
        let perRun: Int64
        switch (length, byteLimit) {
        case let (length?, limit?): perRun = min(length, limit)
        case let (length?, nil): perRun = length
        case let (nil, limit?): perRun = limit
        case (nil, nil): return nil
        }
        let (total, overflow) = perRun.multipliedReportingOverflow(by: Int64(runs))
        return overflow ? Int64.max : total
    }

    /// Whether `host` names this machine: `localhost`, a `*.localhost` name, 127.0.0.0/8 or `::1`.
    public static func isLoopback(host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix(".") { name.removeLast() }
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        if name == "::1" || name == "0:0:0:0:0:0:0:1" { return true }
        if name.hasPrefix("::ffff:") { name.removeFirst("::ffff:".count) }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.allSatisfy { UInt8($0) != nil } && octets[0] == "127"
    }

    /// The host of `url` when it is not on loopback; `nil` for loopback or a URL without a host.
    private static func remoteHost(of url: String) -> String? {
        guard let host = URLComponents(string: url)?.host, !host.isEmpty, !isLoopback(host: host) else { return nil }
        return host
    }
}
