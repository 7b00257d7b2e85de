import ArgumentParser

/// The command tree that `braid get …`, `braid bench …` and `braid help SUBCOMMAND` are parsed with: `braid`'s
/// subcommands without its download options. Parsed from `BraidCommand`, a subcommand's name would be taken for
/// the URL and its options for the download's, as ArgumentParser reads a parent's arguments first.
struct BraidSubcommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: BraidCommand.configuration.commandName,
        abstract: BraidCommand.configuration.abstract,
        subcommands: BraidCommand.configuration.subcommands
    )

    /// Whether `arguments` (without the program name) name a subcommand, or ask for a subcommand's help.
    static func parses(_ arguments: [String]) -> Bool {
        let name = arguments.first == "help" ? arguments.dropFirst().first : arguments.first
        return configuration.subcommands.contains { $0.configuration.commandName == name }
    }
}
