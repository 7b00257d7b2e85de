import ArgumentParser

/// `braid --generate-completion-script SHELL`: ArgumentParser's script for the shell, taught that `braid`'s first
/// word is either the URL or a subcommand's name. ArgumentParser's generators assume that a command's positional
/// arguments come before its subcommand's name, so `braid bench URL --<Tab>` would complete as if `bench` were the
/// URL. Each shell's script gets one edit: when the first word names a subcommand, the root's URL is not expected.
/// An edit whose anchor a newer ArgumentParser no longer prints leaves that script as generated; the tests of
/// the installed completions would then fail.
enum CompletionScript {
    /// The names the first word may take instead of a URL: `braid`'s subcommands and `help`.
    static let subcommandNames =
        BraidCommand.configuration.subcommands.compactMap { $0.configuration.commandName } + ["help"]

    static func generate(for shell: CompletionShell) -> String {
        let script = BraidCommand.completionScript(for: shell)
        let names = subcommandNames
        switch shell {
        case .bash:
            // The root function reads its words, taking the first that is not an option for the URL, before it
            // dispatches on the first word it left unread.
            return script.replacingFirst(
                "\n    __braid_offer_flags_options 1\n",
                with: """

                        if [[ "${unparsed_words[0]}" != @(\(names.joined(separator: "|"))) ]]; then
                            __braid_offer_flags_options 1
                        fi

                    """
            )
        case .zsh:
            // `_arguments` gets the URL as its first positional, then the subcommand, then that one's arguments.
            // Where the URL goes, the subcommands' names are offered too, as bash and fish do.
            return script.replacingFirst(
                "\n    local -ar arg_specs=(\n        ':url:'\n",
                with: """

                        local -a url_spec=(':url:(\(names.joined(separator: " ")))')
                        [[ "${words[2]}" == (\(names.joined(separator: "|"))) ]] && url_spec=()
                        local -ar arg_specs=(
                            "${url_spec[@]}"

                    """
            )
        case .fish:
            // The token parser consumes the root's options and one positional before it looks for a subcommand.
            let urlCount =
                "(contains -- \"$unparsed_tokens[2]\" \(names.joined(separator: " ")); and echo 0; or echo 1)"
            return script.replacingFirst(
                "\n    case 'braid'\n        __braid_parse_subcommand 1 ",
                with: "\n    case 'braid'\n        __braid_parse_subcommand \(urlCount) "
            )
        default:
            return script
        }
    }

    /// The shell `--generate-completion-script` asks for, in any of the forms ArgumentParser accepts
    /// (`--generate-completion-script bash`, `--generate-completion-script=bash`, or none for the user's shell),
    /// or nil when the arguments ask for something else.
    static func requestedShell(in arguments: [String]) -> CompletionShell? {
        let flag = "--generate-completion-script"
        guard let first = arguments.first, first == flag || first.hasPrefix(flag + "=") else { return nil }
        if first.hasPrefix(flag + "=") {
            guard arguments.count == 1 else { return nil }
            return CompletionShell(rawValue: String(first.dropFirst(flag.count + 1)))
        }
        switch arguments.count {
        case 1: return CompletionShell.autodetected()
        case 2: return CompletionShell(rawValue: arguments[1])
        default: return nil
        }
    }
}

extension String {
    fileprivate func replacingFirst(_ anchor: String, with replacement: String) -> String {
        replacing(anchor, with: replacement, maxReplacements: 1)
    }
}
