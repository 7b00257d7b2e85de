import ArgumentParser
import Braid
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// What to download and how: the URL or list, where to save, how many connections, what to verify: the options of
/// `braid get URL`, which `braid URL` is.
struct DownloadArguments: ParsableArguments {
    @Argument(
        help: ArgumentHelp(
            "The http or https URL to download, a Metalink file (.meta4, .metalink) whose files to download, or an "
                + "S3 object (s3://BUCKET/KEY) or every object below a prefix (s3://BUCKET/PREFIX/), signed with "
                + "the AWS_* environment variables.")
    )
    var url: String?

    @Option(
        name: [.short, .customLong("input-file")],
        help: ArgumentHelp(
            "Download every URL listed in FILE ('-' for stdin); 'braid help get' gives the format.",
            valueName: "FILE"),
        completion: .file()
    )
    var inputFile: String?

    @Option(
        name: [.short, .customLong("output")],
        help: ArgumentHelp(
            "Save to FILE, creating its directory (default: the server's or the URL's name, made safe); a "
                + "directory is refused: use -d. '-' writes the file to stdout in order while every connection "
                + "fetches ahead (see --stream-window); the partial file and its manifest stay in -d DIR (default "
                + "the current directory) until the end.",
            valueName: "FILE"),
        completion: .file()
    )
    var output: String?

    @Option(
        help: ArgumentHelp(
            "Unpack the archive (tar, tar.gz, tar.bz2, tar.xz, tar.zst, zip) into DIR while it downloads; names "
                + "that lead outside DIR, links out of it and device files are refused. Run the same command again "
                + "to resume.",
            valueName: "DIR"),
        completion: .directory
    )
    var extract: String?

    @Flag(help: "With --extract: keep the archive too, saved as usual (else its bytes are freed as they are unpacked).")
    var keepArchive = false

    @Option(
        help: ArgumentHelp(
            "With -o - or --extract: how far the connections may fetch ahead of what is written out or unpacked "
                + "(default 256M; at least 1M), held in FILE.part.",
            valueName: "SIZE"),
        transform: SizeArgument.init(parsing:)
    )
    var streamWindow: SizeArgument?

    @Option(
        help: ArgumentHelp(
            "With --extract: the most bytes the archive's entries may declare in all, sparse files at full size "
                + "(default 100 times the archive, at least 1G); more is refused as a decompression bomb.",
            valueName: "SIZE"),
        transform: SizeArgument.init(parsing:)
    )
    var maxUnpacked: SizeArgument?

    @Option(
        name: [.short, .customLong("dir")],
        help: ArgumentHelp(
            "Save into DIR (created if missing), keeping the server's or the URL's file name.", valueName: "DIR"),
        completion: .directory
    )
    var directory: String?

    @Option(
        name: [.customShort("n"), .customShort("x"), .customLong("connections")],
        help: ArgumentHelp(
            "Parallel connections per download, or 'auto' (the default) to let each download choose while it runs, "
                + "starting at 8 (up to --max-connections-per-host, else 16; 64 to a server on this machine).",
            valueName: "N|auto"
        )
    )
    var connections = CountArgument.automatic

    @Option(
        name: [.customShort("j"), .customLong("concurrent-downloads"), .customLong("max-concurrent-downloads")],
        help: ArgumentHelp(
            "With -i: downloads at a time, or 'auto' to start the next one whenever the connection caps leave room "
                + "for it: small files about 16 at a time from one host, large ones fewer, never more than 64.",
            valueName: "N|auto"
        )
    )
    var concurrentDownloads = CountArgument.automatic

    @Option(help: ArgumentHelp("With -i: connections across all downloads.", valueName: "N"))
    var maxConnections = 48

    @Option(
        help: ArgumentHelp(
            "With -i: connections to any one host across all downloads (default 16); with -n auto, also the most "
                + "it chooses.",
            valueName: "N"
        )
    )
    var maxConnectionsPerHost: Int?

    @Option(
        help: ArgumentHelp(
            "With -n auto: remember in FILE the count each server's download settled on, and start the next "
                + "download from that server there (default $XDG_STATE_HOME/braid/server-stats.json, else "
                + "~/.local/state/braid/; entries last a week).",
            valueName: "FILE"
        ),
        completion: .file()
    )
    var serverStats: String?

    @Flag(help: "With -n auto: remember nothing of servers, and start every download from one connection.")
    var noServerStats = false

    @Option(
        help: ArgumentHelp(
            "Receive at most RATE bytes a second per download, all connections together: 512K, 10M, 1.5G "
                + "(binary units; '/s' optional); 0 for no limit.",
            valueName: "RATE"
        ),
        transform: RateArgument.init(parsing:)
    )
    var limitRate: RateArgument?

    @Option(
        help: ArgumentHelp(
            "Receive at most RATE bytes a second across all downloads (with -i: the whole list), on top of "
                + "--limit-rate.",
            valueName: "RATE"),
        transform: RateArgument.init(parsing:)
    )
    var maxOverallLimit: RateArgument?

    @Option(
        help: ArgumentHelp(
            "Verify against ALG=HEX (md5, sha-1, sha-256, sha-512) rather than a digest the server sends; a rerun "
                + "of the same download keeps to it, and one given another is refused until --force.",
            valueName: "ALG=HEX"))
    var checksum: String?

    @Option(
        help: ArgumentHelp(
            "Verify against the line naming the saved file (by its path below -d, for a list's out=sub/name) in "
                + "FILE, a SHA256SUMS or MD5SUMS style list (GNU or BSD lines), rather than a digest the server sends.",
            valueName: "FILE"
        ),
        completion: .file()
    )
    var checksumFile: String?

    @Flag(
        help: ArgumentHelp(
            "Read the argument (a file or a URL) as a Metalink 4 document and download the files it describes; "
                + "a .meta4 or .metalink file needs no flag."
        )
    )
    var metalink = false

    @Option(
        help: ArgumentHelp(
            "With a Metalink: try the mirrors in these countries first (comma-separated ISO 3166 codes: de,fr).",
            valueName: "CODES"
        )
    )
    var metalinkLocation: String?

    /// The country codes of `--metalink-location`.
    var metalinkLocations: [String] {
        (metalinkLocation ?? "").split(separator: ",").map { String($0.filter { $0 != " " }) }
    }

    @Option(
        help: ArgumentHelp(
            "With an s3:// prefix: download only the objects whose key below the prefix matches GLOB (repeatable; "
                + "'*' matches '/' too, '?', '[a-z]').",
            valueName: "GLOB")
    )
    var include: [String] = []

    @Option(
        help: ArgumentHelp(
            "With an s3:// prefix: skip the objects whose key below the prefix matches GLOB (repeatable); an exclude "
                + "wins over an include.",
            valueName: "GLOB")
    )
    var exclude: [String] = []

    @OptionGroup var request: RequestArguments

    @OptionGroup var cachePeerArguments: CachePeerArguments

    @Flag(help: "Print newline-delimited JSON events on stdout instead of progress on stderr.")
    var json = false

    @Option(
        help: ArgumentHelp(
            "With --json: seconds between two progress events of a download (the finest is 0.25).",
            valueName: "S"
        )
    )
    var progressInterval: Double = 1

    @Flag(name: [.short, .long], help: "Print nothing but errors.")
    var quiet = false

    @Flag(name: [.short, .long], help: "Replace an existing file; discard an unusable manifest.")
    var force = false

    @Flag(
        help: ArgumentHelp(
            "After a digest mismatch (exit 6, data kept in FILE.part), fetch the file again, rewrite only the "
                + "bytes that differ and verify again; without kept data, download as usual."
        )
    )
    var repair = false

    @Flag(
        name: [.customShort("c"), .customLong("continue")],
        help: "Resume a partial download (wget -c, aria2c -c): Braid always does; accepted so habits work."
    )
    var continueDownload = false

    @Flag(
        name: [.customShort("R"), .long],
        help: "Give the file the server's Last-Modified time, as curl -R (always for s3:// objects).")
    var remoteTime = false

    @Flag(
        name: [.customShort("N"), .long],
        help: ArgumentHelp(
            "Skip the download if the file is as new as the server's (one If-Modified-Since request; else "
                + "Last-Modified and length compared), as wget -N; else replace it. Implies -R."
        )
    )
    var timestamping = false

    @Flag(
        help: ArgumentHelp(
            "Do not flush the finished file to disk before renaming it into place, nor start writing pieces back "
                + "as they complete."
        )
    )
    var noFsync = false

    @Flag(
        name: [.short, .long],
        help: "Log what Braid does to stderr: -v retries and restarts, -vv every request, -vvv libcurl's trace too."
    )
    var verbose: Int

    /// Checks the options against each other; whether there is anything to download is `validateSource()`'s
    /// question, which `braid --version` does not ask.
    func validate() throws {
        if url != nil && inputFile != nil { throw ValidationError("give either a URL or -i FILE, not both") }
        if metalink && inputFile != nil { throw ValidationError("--metalink reads one document; -i reads a list") }
        if inputFile != nil {
            if output != nil { throw ValidationError("-o names one file; with -i use -d DIR and out= lines") }
            if checksum != nil { throw ValidationError("--checksum is for one URL; with -i use checksum= lines") }
        }
        if checksum != nil && checksumFile != nil {
            throw ValidationError("give either --checksum or --checksum-file, not both")
        }
        if output != nil && output != "-" && directory != nil {
            throw ValidationError("use either -o FILE or -d DIR, not both")
        }
        try validateStream()
        try validateObjectStore()
        if !(progressInterval > 0 && progressInterval <= 86400) {
            throw ValidationError("--progress-interval must be more than 0 seconds and at most a day")
        }
        if case let .fixed(count) = concurrentDownloads, count < 1 {
            throw ValidationError("-j must be at least 1 or auto, got \(count)")
        }
        if maxConnections < 1 { throw ValidationError("--max-connections must be at least 1, got \(maxConnections)") }
        if serverStats != nil && noServerStats {
            throw ValidationError("--server-stats and --no-server-stats contradict each other")
        }
        if serverStats?.isEmpty == true { throw ValidationError("--server-stats needs a file name") }
        if let maxConnectionsPerHost, maxConnectionsPerHost < 1 {
            throw ValidationError("--max-connections-per-host must be at least 1, got \(maxConnectionsPerHost)")
        }
        do throws(BraidError) {
            try sharedOptions.validate()
            if let checksum { _ = try ExpectedDigest(checksumArgument: checksum) }
        } catch {
            throw error.validationError
        }
    }

    /// `$XDG_STATE_HOME/braid/server-stats.json`, else under `~/.local/state`, as the XDG base directories say;
    /// nil without either (nothing is remembered).
    static var defaultServerStatsPath: String? {
        if let state = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), state.hasPrefix("/") {
            return state + "/braid/server-stats.json"
        }
        guard let home = getenv("HOME").map({ String(cString: $0) }), home.hasPrefix("/") else { return nil }
        return home + "/.local/state/braid/server-stats.json"
    }

    /// Throws unless there is something to download: a URL or a list.
    func validateSource() throws {
        if url == nil && inputFile == nil {
            throw ValidationError("give a URL to download, or -i FILE with a list of URLs")
        }
    }

    /// Downloads the URL, or every URL of the list.
    func run() async throws {
        try await withLogger(CommandLogger.make(verbosity: verbose)) { _ in
            if let inputFile {
                try await runList(inputFile)
            } else if let url, ObjectStoreLocation.isObjectStoreURL(url) {
                try await runObjectStore(url)
            } else if let url, Self.isLocalMetalink(url) || (metalink && !url.contains("://")) {
                try await runMetalink(readingAt: url, from: .local)
            } else if let url {
                try await runSingle(url)
            }
        }
    }

    /// The options every download of this command shares; the destination and digest are set per download.
    var sharedOptions: DownloadOptions {
        var options = DownloadOptions()
        options.destination = .directory(directory ?? ".")
        switch connections {
        case let .fixed(count): options.connections = count
        case .automatic:
            options.automaticConnections = true
            options.maximumAutomaticConnections = maxConnectionsPerHost.map { min($0, 1024) }
        }
        // Used only by downloads with automatic connections, which a list's entries may ask for on their own.
        options.serverStatsPath = noServerStats ? nil : serverStats ?? Self.defaultServerStatsPath
        options.rateLimit = limitRate?.bytesPerSecond
        options.checksumFile = checksumFile
        request.apply(to: &options)
        // Checked by `CachePeerArguments.validate()` before any command runs.
        try? cachePeerArguments.apply(to: &options)
        options.overwrite = force
        options.repair = repair
        options.syncOnCompletion = !noFsync
        options.setsRemoteTime = remoteTime
        options.timestamping = timestamping
        options.verbose = verbose >= 3
        return options
    }
}
