import ArgumentParser
import Braid
import Logging

/// The default command: download one URL, or every URL of a list with `-i FILE`.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download URL, or the URLs listed in FILE (the default command: `braid URL` is `braid get URL`).",
        discussion: """
            A list (-i FILE, or -i - for stdin) has one URL per line; tab-separated URLs on one line are mirrors \
            of the same file. Indented lines after a URL set its options: out=NAME, checksum=ALG=HEX, \
            connections=N, header=Name: value. '#' starts a comment. Run the same command again to resume: \
            complete files are verified and skipped.
            """
    )

    @Argument(help: "The http or https URL to download.")
    var url: String?

    @Option(
        name: [.short, .customLong("input-file")],
        help: ArgumentHelp("Download every URL listed in FILE ('-' for stdin).", valueName: "FILE")
    )
    var inputFile: String?

    @Option(name: [.short, .customLong("output")], help: "Save to FILE (default: the server's or the URL's name).")
    var output: String?

    @Option(name: [.short, .customLong("dir")], help: "Save into DIR, keeping the server's or the URL's file name.")
    var directory: String?

    @Option(
        name: [.customShort("n"), .customShort("x"), .customLong("connections")],
        help: "Parallel connections (per download)."
    )
    var connections = 8

    @Option(
        name: [.customShort("j"), .customLong("concurrent-downloads")],
        help: ArgumentHelp("With -i: downloads at a time.", valueName: "N")
    )
    var concurrentDownloads = 3

    @Option(help: ArgumentHelp("With -i: connections across all downloads.", valueName: "N"))
    var maxConnections = 48

    @Option(help: ArgumentHelp("With -i: connections to any one host across all downloads.", valueName: "N"))
    var maxConnectionsPerHost = 16

    @Option(help: ArgumentHelp("Verify against ALG=HEX (md5, sha-256, sha-512).", valueName: "ALG=HEX"))
    var checksum: String?

    @OptionGroup var request: RequestArguments

    @Flag(help: "Print newline-delimited JSON events on stdout instead of progress on stderr.")
    var json = false

    @Flag(name: [.short, .long], help: "Print nothing but errors.")
    var quiet = false

    @Flag(name: [.short, .long], help: "Replace an existing file; discard an unusable manifest.")
    var force = false

    @Flag(help: "Do not flush the finished file to disk before renaming it into place.")
    var noFsync = false

    @Flag(
        name: [.short, .long],
        help: "Log what Braid does to stderr: -v retries and restarts, -vv every request, -vvv libcurl's trace too."
    )
    var verbose: Int

    func validate() throws {
        switch (url, inputFile) {
        case (nil, nil): throw ValidationError("give a URL to download, or -i FILE with a list of URLs")
        case (.some, .some): throw ValidationError("give either a URL or -i FILE, not both")
        default: break
        }
        if inputFile != nil {
            if output != nil { throw ValidationError("-o names one file; with -i use -d DIR and out= lines") }
            if checksum != nil { throw ValidationError("--checksum is for one URL; with -i use checksum= lines") }
        }
        if output != nil && directory != nil { throw ValidationError("use either -o FILE or -d DIR, not both") }
        if concurrentDownloads < 1 { throw ValidationError("-j must be at least 1, got \(concurrentDownloads)") }
        if maxConnections < 1 { throw ValidationError("--max-connections must be at least 1, got \(maxConnections)") }
        if maxConnectionsPerHost < 1 {
            throw ValidationError("--max-connections-per-host must be at least 1, got \(maxConnectionsPerHost)")
        }
        do throws(BraidError) {
            try sharedOptions.validate()
            if let checksum { _ = try ExpectedDigest(checksumArgument: checksum) }
        } catch {
            throw error.validationError
        }
    }

    func run() async throws {
        try await withLogger(CommandLogger.make(verbosity: verbose)) { _ in
            if let inputFile {
                try await runList(inputFile)
            } else if let url {
                try await runSingle(url)
            }
        }
    }

    /// The options every download of this command shares; the destination and digest are set per download.
    var sharedOptions: DownloadOptions {
        var options = DownloadOptions()
        options.destination = .directory(directory ?? ".")
        options.connections = connections
        request.apply(to: &options)
        options.overwrite = force
        options.syncOnCompletion = !noFsync
        options.verbose = verbose >= 3
        return options
    }
}
