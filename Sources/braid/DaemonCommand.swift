import ArgumentParser
import Braid
import BraidDaemon
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// `braid daemon`: a download service that aria2's JSON-RPC clients and a browser page drive.
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run a download service driven by aria2's JSON-RPC clients and its own web page.",
        // Said here: with the cache peers' options, the generated line would be the bare `<options>`.
        usage: "braid daemon [<options>]",
        discussion: """
            Serves aria2's JSON-RPC 2.0 interface at /jsonrpc (HTTP POST and WebSocket, with notifications), so \
            aria2p, AriaNg and other aria2 front ends work unchanged, and a page of its own at /. Every download \
            goes into --dir or a directory below it. The session file keeps every download's state: after a \
            restart, even after a crash, running downloads resume from their manifests, paused ones stay paused \
            and finished ones are listed. Runs until SIGINT or SIGTERM (or aria2.shutdown), then saves and exits 0.
            """
    )

    @Option(
        name: [.short, .long],
        help: ArgumentHelp("Where downloads go; a client's dir must be inside it.", valueName: "DIR"),
        completion: .directory
    )
    var dir = "."

    @Option(
        help: ArgumentHelp(
            "The address to serve on; port 0 picks a free one, an address other than loopback needs --rpc-secret.",
            valueName: "HOST:PORT"))
    var listen = "127.0.0.1:6800"

    @Option(
        name: .customLong("rpc-secret"),
        help: ArgumentHelp(
            "The secret every RPC call must carry as 'token:SECRET' (or set BRAID_RPC_SECRET). Required to listen "
                + "on an address other than loopback. With it, a WebSocket is sent notifications once it shows it "
                + "(ws://HOST:PORT/jsonrpc?token=SECRET, or a call carrying it); programs on this machine that are "
                + "not browsers, such as aria2p, get them at once.",
            valueName: "TOKEN"
        )
    )
    var rpcSecret: String?

    @Option(
        help: ArgumentHelp(
            "The session file (default: DIR/.braid-session). It must be yours and writable by no one else, and "
                + "every download in it must be one a client could add now; otherwise the daemon does not start.",
            valueName: "FILE"
        ),
        completion: .file()
    )
    var session: String?

    @Option(
        name: [.customShort("j"), .customLong("max-concurrent-downloads"), .customLong("concurrent-downloads")],
        help: ArgumentHelp("Downloads at once.", valueName: "N")
    )
    var concurrentDownloads = 5

    @Option(
        name: [.customShort("n"), .customShort("x"), .customLong("connections")],
        help: ArgumentHelp("Connections per download unless a client asks otherwise.", valueName: "N")
    )
    var connections = 8

    @Option(help: ArgumentHelp("Connections to any one host, all downloads together.", valueName: "N"))
    var maxConnectionsPerHost = 16

    @Option(
        help: ArgumentHelp(
            "Bytes a second for all downloads together, as 10M or 512K (default: no limit).", valueName: "RATE"),
        transform: { try RateArgument(parsing: $0) }
    )
    var maxOverallLimit: RateArgument?

    @Option(
        name: [.customLong("cacert"), .customLong("ca-certificate")],
        help: ArgumentHelp(
            "Trust the CA certificates in FILE (PEM) for every download's HTTPS, as a server with a private CA needs.",
            valueName: "FILE"),
        completion: .file()
    )
    var cacert: String?

    @Flag(
        name: [.customShort("k"), .long],
        help: "Do not verify TLS certificates for any download (insecure: anyone on the path can swap a file)."
    )
    var insecure = false

    @Option(
        help: ArgumentHelp(
            "Finished, failed and removed downloads listed at most; past it the oldest is forgotten, as aria2's "
                + "option of the same name does.",
            valueName: "N"))
    var maxDownloadResult = 1000

    @OptionGroup var cachePeerArguments: CachePeerArguments

    @Flag(name: [.short, .long], help: "Print nothing but errors: not even the address it listens on.")
    var quiet = false

    @Option(
        help: ArgumentHelp(
            "Client connections held at once; at the cap a new one replaces the one that has waited longest without "
                + "being served (default 512, at most half the open-file limit).",
            valueName: "N"
        )
    )
    var maxClients: Int?

    func validate() throws {
        guard (1...1000).contains(concurrentDownloads) else {
            throw ValidationError("-j: the number of downloads at once must be 1 to 1000")
        }
        guard (1...64).contains(connections) else { throw ValidationError("-n: connections must be 1 to 64") }
        guard (1...1024).contains(maxConnectionsPerHost) else {
            throw ValidationError("--max-connections-per-host: must be 1 to 1024")
        }
        let address = try ListenAddress(parsing: listen)
        if !DaemonServer.Configuration(host: address.host, port: address.port).listensOnLoopbackOnly, secret == nil {
            throw ValidationError(
                "--listen: \(listen) is not a loopback address; listening there needs --rpc-secret, so that no one "
                    + "else on the network can add downloads"
            )
        }
        if let secret, secret.isEmpty { throw ValidationError("--rpc-secret: the secret must not be empty") }
        guard (1...1_000_000).contains(maxDownloadResult) else {
            throw ValidationError("--max-download-result: must be 1 to 1000000")
        }
        if let maxClients, !(1...65536).contains(maxClients) {
            throw ValidationError("--max-clients: must be 1 to 65536")
        }
        if let cacert, !FileManager.default.isReadableFile(atPath: cacert) {
            throw ValidationError("--cacert: cannot read \(cacert)")
        }
        _ = try downloadDirectory()
    }

    private func downloadDirectory() throws -> DownloadDirectory {
        do throws(DownloadDirectory.Refusal) {
            return try DownloadDirectory(dir)
        } catch {
            throw ValidationError("--dir: \(error.message)")
        }
    }

    /// The secret from `--rpc-secret`, else from `BRAID_RPC_SECRET`.
    private var secret: String? {
        rpcSecret ?? ProcessInfo.processInfo.environment["BRAID_RPC_SECRET"]
    }

    func run() async throws {
        try await withLogger(CommandLogger.make(verbosity: 0)) { _ in try await serve() }
    }

    private func serve() async throws {
        let address = try ListenAddress(parsing: listen)
        let directory = try downloadDirectory()
        var options = DownloadOptions()
        options.connections = connections
        // Absolute: every download reads it, whatever directory the daemon later works in.
        options.caCertificatePath = cacert.map { URL(fileURLWithPath: $0).path }
        options.insecure = insecure
        if insecure && !quiet {
            StandardStreams.error("braid: warning: --insecure: TLS certificates are not verified\n")
        }
        // Checked by `CachePeerArguments.validate()` before the command runs.
        try? cachePeerArguments.apply(to: &options)
        let service = DaemonService(
            configuration: .init(
                directory: directory.root,
                sessionPath: session ?? directory.root + "/.braid-session",
                limits: .init(
                    concurrentDownloads: .fixed(concurrentDownloads),
                    maximumConnections: max(48, maxConnectionsPerHost),
                    maximumConnectionsPerHost: maxConnectionsPerHost,
                    overallRateLimit: maxOverallLimit?.bytesPerSecond
                ),
                baseOptions: options,
                maximumResults: maxDownloadResult
            )
        )
        let (stopRequests, stopRequested) = AsyncStream<Void>.makeStream()
        let signals = SignalTrap { stopRequested.yield() }
        defer { signals.cancel() }
        do throws(BraidError) {
            try service.start()
        } catch {
            StandardStreams.error("braid: \(error.commandLineMessage())\n")
            throw ExitCode(ExitStatus(error.code).rawValue)
        }
        let rpc = Aria2RPC(service: service, directory: directory, secret: secret) { stopRequested.yield() }
        let server = DaemonServer(
            configuration: .init(
                host: address.host, port: address.port, page: DaemonPage.html, admitsOtherOrigins: secret != nil,
                maximumConnections: maxClients ?? Self.defaultMaximumClients),
            endpoint: rpc
        )
        let bound: (host: String, port: Int)
        do {
            bound = try await server.start()
        } catch {
            await service.stop()
            StandardStreams.error("braid: cannot listen on \(listen): \(error)\n")
            throw ExitCode(ExitStatus.localIO.rawValue)
        }
        let shownHost = bound.host.contains(":") ? "[\(bound.host)]" : bound.host
        if !quiet { StandardStreams.output("braid daemon listening on http://\(shownHost):\(bound.port)/\n") }
        for await _ in stopRequests { break }
        await service.stop()
        await server.stop()
    }
}

extension DaemonCommand {
    /// 512 connections, or half the process's open-file limit when that is lower: the other half is the downloads'.
    static var defaultMaximumClients: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 512 }
        return max(8, min(512, Int(clamping: limit.rlim_cur / 2)))
    }
}

/// `--listen`'s `HOST:PORT` (`[::1]:6800` for IPv6).
struct ListenAddress {
    var host: String
    var port: Int

    init(parsing text: String) throws {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw ValidationError("--listen: expected HOST:PORT or [IPv6]:PORT, got \(text)")
            }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw ValidationError("--listen: expected HOST:PORT, got \(text)")
            }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        }
        guard !hostPart.isEmpty, let port = Int(portPart), (0...65535).contains(port) else {
            throw ValidationError("--listen: expected HOST:PORT with a port of 0 to 65535, got \(text)")
        }
        host = String(hostPart)
        self.port = port
    }
}
