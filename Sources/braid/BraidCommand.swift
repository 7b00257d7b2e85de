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
        abstract: "Download files over many connections, resumably, and verify them.",
        discussion: "Run the same command again to resume an interrupted download. Exit statuses: 0 success, "
            + "2 usage, 3 local I/O, 4 network, 5 server protocol, 6 integrity, 7 manifest, 8 file exists, "
            + "130 interrupted. With -i FILE: 0 when every download succeeded, else the status of the first that "
            + "failed in list order.",
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
