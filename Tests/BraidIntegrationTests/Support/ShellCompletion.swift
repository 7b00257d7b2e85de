import BraidTestSupport
import Foundation
import Testing

/// A shell completing a `braid` command line on Tab with a completion script, as a user's shell would: bash calls
/// the script's function as `complete -F` does, zsh runs its completion system in a pseudo-terminal (zsh/zpty)
/// with `compadd` recording every match it is given, fish answers `complete -C`. Each needs only the shell.
enum ShellCompletion: String, CaseIterable, CustomTestStringConvertible {
    case bash, zsh, fish

    var testDescription: String { rawValue }

    /// Where `scripts/install` puts this shell's script, under the prefix.
    var installedScript: String {
        switch self {
        case .bash: "share/bash-completion/completions/braid"
        case .zsh: "share/zsh/site-functions/_braid"
        case .fish: "share/fish/vendor_completions.d/braid.fish"
        }
    }

    /// The words the shell offers for the last word of `line` (a line ending in a space completes an empty
    /// word), with the script at `script`, in `directory`; a directory's trailing slash and fish's descriptions
    /// are dropped.
    func complete(_ line: String, script: String, in directory: String) async throws -> Set<String> {
        let run = try await ChildProcess.run(rawValue, arguments + [script, line, directory], timeout: .seconds(60))
        guard run.status == .exited(0) else {
            throw ShellCompletionFailure(shell: self, line: line, standardError: run.standardError)
        }
        return Set(
            run.standardOutput.split(separator: "\n").map { line in
                let word = line.prefix(while: { $0 != "\t" })
                return String(word.hasSuffix("/") ? word.dropLast() : word)
            })
    }

    /// The shell's arguments before the script, the line and the directory.
    private var arguments: [String] {
        switch self {
        case .bash: ["-c", Self.bashHarness, "bash"]
        case .zsh: ["-f", "-c", Self.zshHarness, "zsh"]
        case .fish: ["--no-config", "-c", "source $argv[1]; cd $argv[3]; complete -C $argv[2]"]
        }
    }

    private static let bashHarness = """
        source "$1"
        cd "$3"
        COMP_LINE=$2
        COMP_POINT=${#COMP_LINE}
        read -r -a COMP_WORDS <<< "$COMP_LINE"
        [[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')
        COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
        COMPREPLY=()
        _braid braid "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf '%s\\n' "${COMPREPLY[@]}"
        """

    /// An interactive zsh in a pseudo-terminal loads the script, types the line and a Tab, and prints every match
    /// `compadd` keeps (calls that only collect, with -O, -A or -D, are passed through), then a marker; the harness
    /// reads up to the marker, so it waits for the completion however long it takes, and no longer.
    private static let zshHarness = #"""
        zmodload zsh/zpty || exit 1
        zpty completing zsh -f -i
        zpty -w completing 'PROMPT=; autoload -U compinit; compinit -u -D'
        zpty -w completing "source ${(q)1}; cd ${(q)3}; bindkey '^I' complete-word"
        zpty -w completing 'compadd() { if [[ "$*" == *-[OAD]\ * ]]; then builtin compadd "$@"; return; fi; local -a hits; builtin compadd -O hits "$@"; print -rl -- "" ${hits/#/MATCH:}; builtin compadd "$@"; }'
        zpty -w completing 'completed() { print -r -- "" "END""-OF-COMPLETION"; exit }; comppostfuncs=(completed)'
        zpty -w -n completing "$2"$'\t'
        zpty -r completing output '*END-OF-COMPLETION*' || exit 1
        zpty -d completing
        print -r -- "${output//$'\r'/}" | sed -n 's/^MATCH://p'
        """#
}

/// A shell that did not complete the line: its script failed to load, or the shell is not installed.
struct ShellCompletionFailure: Error, CustomStringConvertible {
    let shell: ShellCompletion
    let line: String
    let standardError: String

    var description: String { "\(shell.rawValue) could not complete '\(line)': \(standardError)" }
}
