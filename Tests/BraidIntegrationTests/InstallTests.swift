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

    @Test("the man page describes -V, then get (the default subcommand) with the download options, once, then bench")
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
        let version = try #require(page.range(of: "\n.It Fl V , -version\n"))
        let get = try #require(page.range(of: "\n.It Em get\n"), "the get subcommand is described")
        let bench = try #require(page.range(of: "\n.It Em bench\n"), "the bench subcommand is described")
        #expect(version.upperBound < get.lowerBound && get.upperBound < bench.lowerBound)
        let items = [
            "Fl i , -input-file Ar FILE", "Fl o , -output Ar FILE", "Fl d , -dir Ar DIR",
            "Fl n , x , -connections Ar N|auto", "Fl -checksum Ar ALG=HEX", "Fl -cacert Ar FILE",
        ]
        for item in items {
            let described = try #require(page.range(of: "\n.It \(item)\n"), "\(item) missing")
            #expect(get.upperBound < described.lowerBound, "\(item) is described under get")
            #expect(described.upperBound < bench.lowerBound, "\(item) is described before bench")
            let beforeBench = page[..<bench.lowerBound]
            #expect(beforeBench.components(separatedBy: "\n.It \(item)\n").count == 2, "\(item) is described once")
        }
        let synopsis = try #require(page.range(of: ".Sh SYNOPSIS\n.Nm\n"))
        #expect(page[synopsis.upperBound...].hasPrefix(".Oo\n.Ar subcommand\n.Oc\n"), "the subcommand is optional")
    }

    /// A staged installation with a scratch directory of files to complete: three files and a subdirectory.
    struct CompletionFixture {
        let staging: Staging
        let files: URL

        init() async throws {
            staging = try Staging()
            let run = try await staging.install()
            #expect(run.status == .exited(0), "\(run.standardError)")
            files = staging.directory.appending("files")
            try FileManager.default.createDirectory(
                at: files.appendingPathComponent("subdir"), withIntermediateDirectories: true)
            for name in ["image.iso", "list.txt", "ca.pem"] {
                try Data().write(to: files.appendingPathComponent(name))
            }
        }

        /// What `shell` offers for the last word of `line`, with its installed script, among the files.
        func complete(_ line: String, with shell: ShellCompletion) async throws -> Set<String> {
            try await shell.complete(line, script: staging.path("usr/local/" + shell.installedScript), in: files.path)
        }
    }

    @Test(
        "each shell completes the subcommands, each one's options after its URL, and file names after -o, -i, -d",
        arguments: ShellCompletion.allCases
    )
    func completion(shell: ShellCompletion) async throws {
        let fixture = try await CompletionFixture()
        defer { fixture.staging.remove() }
        func complete(_ line: String) async throws -> Set<String> { try await fixture.complete(line, with: shell) }

        let afterURL = try await complete("braid get https://example.org/big.iso -")
        for option in ["-o", "--output", "-d", "--dir", "-n", "-x", "--checksum", "-i", "--input-file", "--cacert"] {
            #expect(afterURL.contains(option), "braid get URL -<Tab> offers \(option): \(afterURL.sorted())")
        }
        #expect(!afterURL.contains("--repeat"), "\(afterURL.sorted())")
        #expect(try await complete("braid get https://example.org/big.iso --out") == ["--output"])
        let files: Set = ["image.iso", "list.txt", "ca.pem", "subdir"]
        #expect(try await complete("braid get https://example.org/big.iso -o ") == files)
        #expect(try await complete("braid get -i li") == ["list.txt"])
        #expect(try await complete("braid get https://example.org/big.iso --cacert c") == ["ca.pem"])
        #expect(try await complete("braid get https://example.org/big.iso -d ") == ["subdir"])

        let afterBenchURL = try await complete("braid bench https://example.org/big.iso --")
        for option in ["--repeat", "--bytes", "--discard", "--csv", "--svg", "--connections", "--header", "--verbose"] {
            #expect(
                afterBenchURL.contains(option), "braid bench URL --<Tab> offers \(option): \(afterBenchURL.sorted())")
        }
        #expect(!afterBenchURL.contains("--output"), "\(afterBenchURL.sorted())")
        #expect(try await complete("braid bench https://example.org/big.iso --rep") == ["--repeat"])

        let daemon = try await complete("braid daemon -")
        for option in ["-d", "--dir", "-x", "-q", "--session", "--rpc-secret"] {
            #expect(daemon.contains(option), "braid daemon -<Tab> offers \(option): \(daemon.sorted())")
        }
        #expect(try await complete("braid daemon -d ") == ["subdir"])

        #expect(try await complete("braid be") == ["bench"])
        #expect(try await complete("braid ").isSuperset(of: ["get", "bench", "daemon"]))
    }

    @Test(
        "known gap: without `get`, no shell completes the download options (swift-argument-parser 1.8.2)",
        arguments: ShellCompletion.allCases
    )
    func completionWithoutGet(shell: ShellCompletion) async throws {
        let fixture = try await CompletionFixture()
        defer { fixture.staging.remove() }

        let afterURL = try await fixture.complete("braid https://example.org/big.iso -", with: shell)
        let afterOutput = try await fixture.complete("braid -o ", with: shell)
        // ArgumentParser's scripts offer a default subcommand's options only after its name
        // (apple/swift-argument-parser#488): `braid URL` is parsed as `braid get URL`, but completed as a first
        // word that names no subcommand. When a newer ArgumentParser completes them, this test fails: remove
        // the known issues and the word "get" from the lines of `completion(shell:)`.
        withKnownIssue("apple/swift-argument-parser#488") {
            #expect(afterURL.contains("--output"), "\(afterURL.sorted())")
        }
        withKnownIssue("apple/swift-argument-parser#488") {
            #expect(afterOutput.contains("list.txt"), "\(afterOutput.sorted())")
        }
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
