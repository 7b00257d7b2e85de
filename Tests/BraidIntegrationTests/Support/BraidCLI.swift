import BraidTestSupport
import Foundation

/// Runs the `braid` executable built next to the test bundle, as a user would.
enum BraidCLI {
    /// The `braid` binary from the same build as these tests.
    static let path: String = {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundle, bundle.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("braid").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        let fromBuild = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/braid").path
        return fromBuild
    }()

    /// Runs braid with `arguments`, in this process's environment with `extra` set over it.
    static func run(
        _ arguments: [String], environment extra: [String: String] = [:], timeout: Duration = .seconds(120)
    ) async throws -> ChildProcess.Completed {
        let state = newStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let environment = environment(state: state).merging(extra) { _, new in new }
        return try await ChildProcess.run(path, arguments, environment: environment, timeout: timeout)
    }

    /// Runs `braid` through `wrapper`, a command that ends by executing its last argument with the arguments after
    /// it (`unshare … sh -c '…; exec "$0" "$@"'`).
    static func run(
        _ arguments: [String], through wrapper: [String], timeout: Duration = .seconds(120)
    ) async throws -> ChildProcess.Completed {
        let state = newStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        return try await ChildProcess.run(
            wrapper[0], Array(wrapper.dropFirst()) + [path] + arguments, environment: environment(state: state),
            timeout: timeout)
    }

    static func start(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(path, arguments, environment: environment(state: newStateDirectory()))
    }

    /// This process's environment with `XDG_STATE_HOME` at `state`: what one run of `-n auto` remembers of a
    /// loopback server (whose port a later test's server may get) cannot steer another run, and nothing is written
    /// to the home directory. A test that wants a run to remember passes `--server-stats`.
    private static func environment(state: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = state
        return environment
    }

    /// A fresh path under this process's own directory in the temporary directory; created only by a run that
    /// remembers something. A run removes its own as it ends; that directory, with what a process started and left
    /// running put there, goes as the test process exits.
    private static func newStateDirectory() -> String {
        _ = removesStateRootAtExit
        return stateRoot + "/" + UUID().uuidString
    }

    private static var stateRoot: String {
        NSTemporaryDirectory() + "braid-tests-state-\(ProcessInfo.processInfo.processIdentifier)"
    }

    private static let removesStateRootAtExit: Void = {
        atexit { try? FileManager.default.removeItem(atPath: BraidCLI.stateRoot) }
    }()
}

/// Established TCP connections to a local port, read from /proc/net/tcp{,6}: lets a test wait until a server has
/// seen every connection of a killed client close, instead of sleeping.
enum LoopbackConnections {
    static func established(toPort port: Int) -> Int {
        var count = 0
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 3 else { continue }
                let local = fields[1].split(separator: ":")
                guard local.count == 2, let localPort = Int(local[1], radix: 16) else { continue }
                if localPort == port && fields[3] == "01" { count += 1 }
            }
        }
        return count
    }
}

/// Reads a Braid manifest from disk as plain JSON, the way an outside observer would.
struct ManifestFile {
    let length: Int64
    let done: Int64
    let segments: Int
    /// Each segment's bytes and how many of them from its start are done, in the manifest's order.
    let spans: [(range: Range<Int64>, done: Int64)]

    init?(at url: URL) {
        guard let data = try? Data(contentsOf: url),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let length = (object["length"] as? NSNumber)?.int64Value,
            let segments = object["segments"] as? [[String: Any]]
        else { return nil }
        self.length = length
        self.segments = segments.count
        done = segments.reduce(0) { $0 + ((($1["done"] as? NSNumber)?.int64Value) ?? 0) }
        spans = segments.compactMap { segment in
            guard let start = (segment["start"] as? NSNumber)?.int64Value,
                let end = (segment["end"] as? NSNumber)?.int64Value, start <= end,
                let done = (segment["done"] as? NSNumber)?.int64Value
            else { return nil }
            return (start..<end, done)
        }
    }

    /// Whether the segments cover the file from 0 to its length, each starting where the one before it ends: no
    /// gap, no overlap.
    var tilesFile: Bool {
        let sorted = spans.map(\.range).sorted { $0.lowerBound < $1.lowerBound }
        guard spans.count == segments, sorted.first?.lowerBound == 0, sorted.last?.upperBound == length else {
            return false
        }
        return zip(sorted, sorted.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound }
    }
}
