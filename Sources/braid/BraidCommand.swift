import ArgumentParser
import Braid

#if canImport(Glibc)
    import Glibc
#endif

/// `braid`: a segmented, resumable, verified downloader. Its subcommands are `get`, the default (`braid URL` is
/// `braid get URL`), `bench` and `daemon`; ArgumentParser parses this one tree and writes its help, the man page
/// and the shell completions from it. A first word that names a subcommand is that subcommand: `braid get bench`
/// downloads a URL spelled `bench`.
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
        discussion: "'braid URL' is 'braid get URL': 'braid help get' lists the download options and describes the "
            + "list format. Run the same command again to resume an interrupted download. Exit statuses: 0 success, "
            + "2 usage, 3 local I/O, 4 network, 5 server protocol, 6 integrity (after a digest mismatch the data is "
            + "kept in FILE.part for --repair), 7 manifest, 8 file exists, 130 interrupted. With -i FILE: 0 when "
            + "every download succeeded, else the status of the first that failed in list order. A Metalink 4 file "
            + "(FILE.meta4, or --metalink FILE|URL, or a URL served as application/metalink4+xml) downloads the "
            + "files it describes from its mirrors, verified against its hashes.",
        subcommands: [GetCommand.self, BenchCommand.self, DaemonCommand.self],
        defaultSubcommand: GetCommand.self
    )

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

    /// `-V` is the root's flag, which ArgumentParser reads wherever it stands (`braid get -V` too) before it parses
    /// a subcommand; the version is printed then, as ArgumentParser's own `--version` would be.
    func validate() throws {
        if version { throw CleanExit.message(Self.versionReport) }
    }

    /// Parses the arguments and runs the command, mapping argument errors to exit status 2 (not ArgumentParser's
    /// 64) as documented.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                let firstLine = message(for: error).split(separator: "\n").first.map(String.init)
                StandardStreams.error("braid: \(firstLine ?? "invalid arguments")\n")
                Glibc.exit(ExitStatus.usage.rawValue)
            }
            exit(withError: error)
        }
    }
}
