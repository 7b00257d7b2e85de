import ArgumentParser

/// `braid --experimental-dump-help`: ArgumentParser's JSON description of the command tree, which the man page is
/// generated from (swift-argument-parser's generate-manual), with `get` named the root's default subcommand.
/// `braid URL` is `braid get URL`, so the man page's synopsis then shows the subcommand as optional; as parsed,
/// the root downloads by itself (see `BraidSubcommands`).
enum HelpDump {
    static func requested(by arguments: [String]) -> Bool {
        arguments == ["--experimental-dump-help"]
    }

    static func generate() -> String {
        let dump: String
        do {
            _ = try BraidCommand.parseAsRoot(["--experimental-dump-help"])
            preconditionFailure("ArgumentParser answers --experimental-dump-help by throwing its description")
        } catch {
            dump = BraidCommand.message(for: error)
        }
        let defaultName = GetCommand.configuration.commandName ?? "get"
        return dump.replacing(
            "\"command\" : {",
            with: "\"command\" : {\n    \"defaultSubcommand\" : \"\(defaultName)\",",
            maxReplacements: 1
        )
    }
}
