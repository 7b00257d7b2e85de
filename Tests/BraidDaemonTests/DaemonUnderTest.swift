import BraidTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The aria2-compatible daemon the client scripts in `Tests/Daemon` drive, running as a child process on a free
/// loopback port with a download directory and a session file of its own.
///
/// braid's daemon by default. With `BRAID_DAEMON_TESTS_TARGET=aria2c` in the environment the same tests drive the
/// real aria2 instead, to show the scripts encode aria2's own semantics rather than braid's reading of them.
struct DaemonUnderTest {
    /// Which program serves the JSON-RPC.
    enum Kind: String {
        case braid
        case aria2c

        /// The daemon these tests drive in this run.
        static let current =
            Kind(rawValue: ProcessInfo.processInfo.environment["BRAID_DAEMON_TESTS_TARGET"] ?? "")
            ?? .braid
    }

    let kind: Kind
    let child: ChildProcess
    /// `http://127.0.0.1:PORT`, without a trailing slash.
    let baseURL: String

    /// The JSON-RPC endpoint, for HTTP POSTs and (as `ws://`) the WebSocket.
    var rpcURL: String { baseURL + "/jsonrpc" }

    /// Starts the daemon with `arguments` in braid's spelling (`-j=N`, `--max-connections-per-host=N`), which are
    /// translated for aria2c. braid's daemon names its port on its first line of stdout; aria2c is given a free
    /// one, and the scripts wait for it to answer.
    ///
    /// - Parameters:
    ///   - secret: nil for a daemon without one (braid only).
    ///   - fileLimit: the daemon's limit of open files (`ulimit -n`), to run it short of descriptors (braid only).
    static func start(
        _ kind: Kind = .current,
        directory: String,
        session: String,
        secret: String?,
        arguments: [String] = [],
        fileLimit: Int? = nil
    ) async throws -> DaemonUnderTest {
        switch kind {
        case .braid:
            let child = try braidChild(
                ["daemon", "--listen", "127.0.0.1:0", "--dir", directory, "--session", session]
                    + (secret.map { ["--rpc-secret", $0] } ?? []) + arguments,
                fileLimit: fileLimit
            )
            let prefix = "braid daemon listening on "
            do {
                try await child.waitUntil("braid daemon to print its URL", timeout: .seconds(30)) {
                    child.standardOutput.contains("\n")
                }
            } catch {
                child.stop()
                throw error
            }
            let line = String(child.standardOutput.prefix { $0 != "\n" })
            guard line.hasPrefix(prefix) else {
                child.stop()
                throw DaemonTestError("braid daemon's first line is '\(line)', not '\(prefix)URL'")
            }
            let url = line.dropFirst(prefix.count).trimmingCharacters(in: CharacterSet(charactersIn: "/ "))
            return DaemonUnderTest(kind: kind, child: child, baseURL: url)
        case .aria2c:
            let port = try FreePort.pick()
            let child = try ChildProcess(
                "aria2c",
                [
                    "--enable-rpc", "--rpc-listen-port=\(port)", "--rpc-listen-all=false",
                    "--rpc-secret=\(secret ?? "")",
                    "--dir=\(directory)", "--daemon=false", "--save-session=\(session)", "--no-conf",
                    "--console-log-level=warn", "--summary-interval=0",
                ] + arguments.map(aria2Option)
            )
            return DaemonUnderTest(kind: kind, child: child, baseURL: "http://127.0.0.1:\(port)")
        }
    }

    /// `braid ARGUMENTS` as a child, under `ulimit -n fileLimit` when given (through `sh`, which `exec`s braid, so
    /// the child's process is braid's).
    static func braidChild(_ arguments: [String], fileLimit: Int? = nil) throws -> ChildProcess {
        guard let fileLimit else { return try ChildProcess(braidPath, arguments) }
        return try ChildProcess(
            "/bin/sh", ["-c", "ulimit -n \(fileLimit) && exec \"$0\" \"$@\"", braidPath] + arguments)
    }

    /// Stops the daemon with SIGTERM and returns how it ended.
    @discardableResult
    func stop() -> ChildProcess.ExitStatus {
        child.stop(signal: SIGTERM, gracePeriod: .seconds(15))
    }

    /// braid's daemon flags in aria2c's spelling.
    static func aria2Option(_ option: String) -> String {
        let names = ["-j": "--max-concurrent-downloads", "--max-connections-per-host": "--max-connection-per-server"]
        let name = String(option.prefix { $0 != "=" })
        return (names[name] ?? name) + option.dropFirst(name.count)
    }

    /// The `braid` binary from the same build as these tests, or the one `BRAID_DAEMON_TESTS_BINARY` names (a
    /// release build, say).
    static let braidPath: String = {
        if let path = ProcessInfo.processInfo.environment["BRAID_DAEMON_TESTS_BINARY"] { return path }
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundle, bundle.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("braid").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return packageRoot.appendingPathComponent(".build/debug/braid").path
    }()

    /// The package's root directory, found from this file's path.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The folder of client scripts, `Tests/Daemon`.
    static let scripts = packageRoot.appendingPathComponent("Tests/Daemon")
}

/// A daemon test's fixture did not behave as the contract says.
struct DaemonTestError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
