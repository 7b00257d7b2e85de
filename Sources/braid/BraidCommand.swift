import ArgumentParser
import Braid

#if canImport(Glibc)
    import Glibc
#endif

/// `braid`: a segmented, resumable, verified downloader. The root command downloads (`braid URL`), so its help,
/// man page and shell completion lead with the download options; `get` and `bench` are its subcommands.
@main
struct BraidCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "braid",
        abstract: "Download files over many connections, resumably, and verify them.",
        usage: """
            braid [<options>] <url>
            braid [<options>] -i <file>
            braid <subcommand>
            """,
        discussion: "Run the same command again to resume an interrupted download. Exit statuses: 0 success, "
            + "2 usage, 3 local I/O, 4 network, 5 server protocol, 6 integrity (after a digest mismatch the data "
            + "is kept in FILE.part for --repair), 7 manifest, 8 file exists, "
            + "130 interrupted. With -i FILE: 0 when every download succeeded, else the status of the first that "
            + "failed in list order. 'braid help get' describes the list format. A Metalink 4 file (FILE.meta4, or "
            + "--metalink FILE|URL, or a URL served as application/metalink4+xml) downloads the files it describes "
            + "from its mirrors, verified against its hashes.",
        subcommands: [GetCommand.self, BenchCommand.self, DaemonCommand.self]
    )

    @OptionGroup var download: DownloadArguments

    @Flag(name: [.customShort("V"), .customLong("version")], help: "Print the versions of Braid, libcurl and OpenSSL.")
    var version = false

    /// What `braid --version` prints: Braid's version, then the libraries it runs on, one per line.
    static var versionReport: String {
        """
        braid \(BraidVersion.current)
        libcurl \(BraidVersion.libcurl) (\(BraidVersion.libcurlTLS ?? "no TLS"))
        \(BraidVersion.openSSL)

        """
    }

    func validate() throws {
        if !version { try download.validateSource() }
    }

    func run() async throws {
        if version {
            StandardStreams.output(Self.versionReport)
        } else {
            try await download.run()
        }
    }

    /// Parses the arguments with the tree that owns them (see `BraidSubcommands`) and runs the command, mapping
    /// argument errors to exit status 2 (not ArgumentParser's 64) as documented. `braid help` is `braid --help`;
    /// completion scripts and the description the man page is made from come from `CompletionScript` and
    /// `HelpDump`.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let shell = CompletionScript.requestedShell(in: arguments) {
            StandardStreams.output(CompletionScript.generate(for: shell))
        } else if HelpDump.requested(by: arguments) {
            StandardStreams.output(HelpDump.generate() + "\n")
        } else if BraidSubcommands.parses(arguments) {
            await execute(BraidSubcommands.self, arguments)
        } else {
            await execute(BraidCommand.self, arguments.first == "help" ? ["--help"] : arguments)
        }
    }

    private static func execute<Root: ParsableCommand>(_ root: Root.Type, _ arguments: [String]) async {
        do {
            var command = try root.parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = root.exitCode(for: error)
            if code == .validationFailure {
                let firstLine = root.message(for: error).split(separator: "\n").first.map(String.init)
                StandardStreams.error("braid: \(firstLine ?? "invalid arguments")\n")
                Glibc.exit(ExitStatus.usage.rawValue)
            }
            root.exit(withError: error)
        }
    }
}
