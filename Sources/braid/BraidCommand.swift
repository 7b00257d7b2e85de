import ArgumentParser
import Braid

#if canImport(Glibc)
    import Glibc
#endif

/// `braid`: a segmented, resumable, verified downloader.
@main
struct BraidCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "braid",
        abstract: "Download a file over many connections, resumably, and verify it.",
        discussion: "Run the same command again to resume an interrupted download. Exit statuses: 0 success, "
            + "2 usage, 3 local I/O, 4 network, 5 server protocol, 6 integrity, 7 manifest, 8 file exists, "
            + "130 interrupted.",
        version: BraidVersion.current,
        subcommands: [GetCommand.self, BenchCommand.self],
        defaultSubcommand: GetCommand.self
    )

    /// Runs the command, mapping argument errors to exit status 2 (not ArgumentParser's 64) as documented.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                let firstLine = message(for: error).split(separator: "\n").first.map(String.init) ?? "invalid arguments"
                StandardStreams.error("braid: \(firstLine)\n")
                Glibc.exit(ExitStatus.usage.rawValue)
            }
            exit(withError: error)
        }
    }
}

/// The default command: download one URL.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download URL (the default command: `braid URL` is `braid get URL`)."
    )

    @Argument(help: "The http or https URL to download.")
    var url: String

    @Option(name: [.short, .customLong("output")], help: "Save to FILE (default: the server's or the URL's name).")
    var output: String?

    @Option(name: [.short, .customLong("dir")], help: "Save into DIR, keeping the server's or the URL's file name.")
    var directory: String?

    @Option(
        name: [.customShort("n"), .customShort("x"), .customLong("connections")],
        help: "Parallel connections."
    )
    var connections = 8

    @Option(help: ArgumentHelp("Verify against ALG=HEX (md5, sha-256, sha-512).", valueName: "ALG=HEX"))
    var checksum: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: "Extra request header 'Name: value' (repeatable).")
    var headers: [String] = []

    @Flag(name: [.short, .long], help: "Print nothing but errors.")
    var quiet = false

    @Flag(name: [.short, .long], help: "Replace an existing file; discard an unusable manifest.")
    var force = false

    @Option(help: ArgumentHelp("Trust the CA certificates in FILE (PEM) for HTTPS.", valueName: "FILE"))
    var cacert: String?

    @Flag(
        name: [.short, .long], help: "Do not verify TLS certificates (insecure: anyone on the path can swap the file).")
    var insecure = false

    @Option(help: "Attempts per segment without progress before giving up.")
    var maxTries = 6

    @Option(help: "Seconds a connection may stall before it is replaced.")
    var stallTimeout = 30

    @Option(help: "Seconds allowed to connect.")
    var connectTimeout = 30

    @Flag(help: "Do not flush the finished file to disk before renaming it into place.")
    var noFsync = false

    @Flag(name: [.short, .long], help: "Show libcurl's protocol trace.")
    var verbose = false

    func validate() throws {
        if output != nil && directory != nil { throw ValidationError("use either -o FILE or -d DIR, not both") }
        if connections < 1 { throw ValidationError("-n must be at least 1, got \(connections)") }
        if let checksum {
            do {
                _ = try ExpectedDigest(checksumArgument: checksum)
            } catch {
                throw ValidationError(error.message)
            }
        }
    }

    func run() async throws {
        var options = DownloadOptions()
        if let output {
            options.destination = .file(output)
        } else {
            options.destination = .directory(directory ?? ".")
        }
        options.connections = connections
        options.expectedDigest = try checksum.map { try ExpectedDigest(checksumArgument: $0) }
        options.headers = headers
        options.overwrite = force
        options.caCertificatePath = cacert
        options.insecure = insecure
        options.maximumAttempts = maxTries
        options.stallTimeoutSeconds = stallTimeout
        options.connectTimeoutSeconds = connectTimeout
        options.syncOnCompletion = !noFsync
        options.verbose = verbose

        let download = Download(url: url, options: options)
        let reporter = ProgressReporter(quiet: quiet)
        if insecure && !quiet {
            reporter.warn("warning: --insecure: TLS certificates are not verified")
        }
        let signals = SignalTrap { download.interrupt() }
        let reporting = Task { [events = download.events] in
            for await event in events { reporter.handle(event) }
        }
        do {
            _ = try await download.run()
            await reporting.value
            signals.cancel()
        } catch {
            await reporting.value
            signals.cancel()
            reporter.fail(error)
            if error.code == .interrupted, signals.caughtSignal == SIGTERM {
                throw ExitCode(128 + SIGTERM)
            }
            throw ExitCode(ExitStatus(error.code).rawValue)
        }
    }
}
