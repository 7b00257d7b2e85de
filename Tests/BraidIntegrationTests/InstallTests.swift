import Braid
import BraidTestSupport
import Foundation
import Testing

/// `scripts/install` as a packager runs it, staged under DESTDIR, with the braid these tests were built with
/// (`--binary`): the installed binary, its man page and its bash, zsh and fish completions.
@Suite("scripts/install", .serialized)
struct InstallTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Where the script puts each file, under DESTDIR and the default PREFIX.
    static let installedFiles = [
        "usr/local/bin/braid", "usr/local/share/man/man1/braid.1",
        "usr/local/share/bash-completion/completions/braid", "usr/local/share/zsh/site-functions/_braid",
        "usr/local/share/fish/vendor_completions.d/braid.fish",
    ]

    /// A staged installation in a directory of its own.
    struct Staging {
        let directory: TemporaryDirectory

        init() throws {
            directory = try TemporaryDirectory(prefix: "braid-install")
        }

        func path(_ file: String) -> String { directory.appending("stage/" + file).path }

        func contents(_ file: String) throws -> String { try String(contentsOfFile: path(file), encoding: .utf8) }

        /// Runs `scripts/install --binary BRAID arguments…` with DESTDIR set to the staging directory. The first
        /// run in a fresh clone also builds the man page generator.
        func install(_ arguments: [String] = []) async throws -> ChildProcess.Completed {
            var environment = ProcessInfo.processInfo.environment
            environment["DESTDIR"] = directory.appending("stage").path
            return try await ChildProcess.run(
                "bash",
                [InstallTests.packageRoot.appendingPathComponent("scripts/install").path, "--binary", BraidCLI.path]
                    + arguments,
                environment: environment,
                timeout: .seconds(600)
            )
        }

        func remove() { directory.remove() }
    }

    @Test("installs braid, its man page and three completion scripts under DESTDIR/PREFIX; a second run is the same")
    func installsEverything() async throws {
        let staging = try Staging()
        defer { staging.remove() }

        let first = try await staging.install()

        #expect(first.status == .exited(0), "\(first.standardError)")
        for file in Self.installedFiles {
            #expect(first.standardOutput.contains(staging.path(file)), "says it installed \(file)")
            #expect(FileManager.default.fileExists(atPath: staging.path(file)), "\(file)")
        }
        #expect(FileManager.default.isExecutableFile(atPath: staging.path("usr/local/bin/braid")))
        let version = try await ChildProcess.run(staging.path("usr/local/bin/braid"), ["-V"])
        #expect(version.status == .exited(0))
        #expect(
            version.standardOutput.hasPrefix("braid \(BraidVersion.current)\nlibcurl "), "\(version.standardOutput)")

        let before = try Self.installedFiles.map { try Data(contentsOf: URL(fileURLWithPath: staging.path($0))) }
        let second = try await staging.install()
        #expect(second.status == .exited(0), "\(second.standardError)")
        let after = try Self.installedFiles.map { try Data(contentsOf: URL(fileURLWithPath: staging.path($0))) }
        #expect(before == after, "running it again installs the same files")
    }

    @Test("the man page describes the download options first, then the subcommands")
    func manPage() async throws {
        let staging = try Staging()
        defer { staging.remove() }
        let run = try await staging.install()
        #expect(run.status == .exited(0), "\(run.standardError)")

        let page = try staging.contents("usr/local/share/man/man1/braid.1")
        #expect(page.contains(".Dt BRAID 1"))
        for section in [".Sh NAME", ".Sh SYNOPSIS", ".Sh DESCRIPTION"] {
            #expect(page.contains("\n\(section)\n"), "\(section)")
        }
        let bench = try #require(page.range(of: "\n.It Em bench\n"), "the bench subcommand is described")
        let items = [
            "Fl i , -input-file Ar FILE", "Fl o , -output Ar FILE", "Fl d , -dir Ar DIR",
            "Fl n , x , -connections Ar N|auto",
            "Fl -checksum Ar ALG=HEX", "Fl -cacert Ar FILE", "Fl V , -version",
        ]
        for item in items {
            let described = try #require(page.range(of: "\n.It \(item)\n"), "\(item) missing")
            #expect(described.upperBound < bench.lowerBound, "\(item) is described before the subcommands")
        }
        let synopsis = try #require(page.range(of: ".Sh SYNOPSIS\n.Nm\n"))
        #expect(page[synopsis.upperBound...].hasPrefix(".Oo\n.Ar subcommand\n.Oc\n"), "the subcommand is optional")
    }

    /// Completes the last word of a command line the way bash does on Tab, with the installed script, in
    /// `directory`; a line ending in a space completes an empty word. Needs bash alone, not bash-completion.
    static let bashCompletionHarness = """
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

    @Test("bash completes the download options after a URL, file names after -o, -i and --cacert, and subcommands")
    func bashCompletion() async throws {
        let staging = try Staging()
        defer { staging.remove() }
        let run = try await staging.install()
        #expect(run.status == .exited(0), "\(run.standardError)")
        let files = staging.directory.appending("files")
        try FileManager.default.createDirectory(
            at: files.appendingPathComponent("subdir"), withIntermediateDirectories: true)
        for name in ["image.iso", "list.txt", "ca.pem"] {
            try Data().write(to: files.appendingPathComponent(name))
        }
        let script = staging.path("usr/local/share/bash-completion/completions/braid")

        func complete(_ line: String) async throws -> Set<String> {
            let run = try await ChildProcess.run(
                "bash", ["-c", Self.bashCompletionHarness, "bash", script, line, files.path])
            #expect(run.status == .exited(0), "\(line): \(run.standardError)")
            return Set(run.standardOutput.split(separator: "\n").map(String.init))
        }

        let afterURL = try await complete("braid https://example.org/big.iso -")
        for option in ["-o", "--output", "-d", "--dir", "-n", "--checksum", "-i", "--input-file", "--cacert", "-V"] {
            #expect(afterURL.contains(option), "braid URL -<Tab> offers \(option): \(afterURL.sorted())")
        }
        #expect(try await complete("braid https://example.org/big.iso --out") == ["--output"])
        #expect(
            try await complete("braid https://example.org/big.iso -o ") == [
                "image.iso", "list.txt", "ca.pem", "subdir",
            ])
        #expect(try await complete("braid -i li") == ["list.txt"])
        #expect(try await complete("braid https://example.org/big.iso --cacert c") == ["ca.pem"])
        #expect(try await complete("braid https://example.org/big.iso -d ") == ["subdir"])
        #expect(try await complete("braid be") == ["bench"])
        #expect(try await complete("braid bench https://example.org/big.iso --rep") == ["--repeat"])
        #expect(try await complete("braid get https://example.org/big.iso --out") == ["--output"])
    }

    @Test("zsh and fish complete the download options at the top level, with file names after -o")
    func zshAndFishCompletion() async throws {
        let staging = try Staging()
        defer { staging.remove() }
        let run = try await staging.install()
        #expect(run.status == .exited(0), "\(run.standardError)")

        let zsh = try staging.contents("usr/local/share/zsh/site-functions/_braid")
        let root = try #require(zsh.range(of: "\n_braid() {\n"))
        let get = try #require(zsh.range(of: "\n_braid_get() {\n"))
        let output = try #require(zsh.range(of: "{-o,--output}'[Save to FILE"))
        #expect(root.upperBound < output.lowerBound && output.upperBound < get.lowerBound, "in the root function")
        #expect(zsh[output.upperBound...].prefix(while: { $0 != "\n" }).hasSuffix(":FILE:_files'"))
        #expect(
            zsh.contains("[[ \"${words[2]}\" == (get|bench|daemon|help) ]] && url_spec=()"), "a subcommand is no URL")

        let fish = try staging.contents("usr/local/share/fish/vendor_completions.d/braid.fish")
        let fishOutput = fish.split(separator: "\n").filter {
            $0.contains("for_flags_or_options \"braid\" o output") && $0.contains("-s 'o' -l 'output'")
        }
        #expect(fishOutput.count == 1 && fishOutput.first?.hasSuffix(" -rF") == true, "\(fishOutput)")
        #expect(fish.contains("__braid_parse_subcommand (contains -- \"$unparsed_tokens[2]\" get bench daemon help;"))
    }

    @Test(
        "a relative PREFIX, an unknown option or a missing binary stop the script before it installs anything",
        arguments: [(["relative/prefix"], 2), (["--no-such-option"], 2), (["--binary", "/nonexistent/braid"], 1)]
            as [([String], Int32)]
    )
    func refusals(arguments: [String], status: Int32) async throws {
        let staging = try Staging()
        defer { staging.remove() }

        let run = try await staging.install(arguments)

        #expect(run.status == .exited(status), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: staging.path("")), "nothing staged")
    }
}
