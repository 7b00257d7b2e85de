import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// What `braid` shows before any download: the top-level help with its subcommands, `get` the default, and the
/// download options in `get`'s help; the versions it runs on; usage errors with status 2; and that `braid URL` and
/// `braid get URL` are one command.
@Suite("braid's command line")
struct CommandLineTests {
    /// Options of the download, as `braid help get` must list them.
    static let downloadOptions = [
        "-i, --input-file <FILE>", "-o, --output <FILE>", "-d, --dir <DIR>", "-n, -x, --connections <N|auto>",
        "--checksum <ALG=HEX>", "-H, --header <HEADER>", "--cacert <FILE>", "-k, --insecure", "--json", "-q, --quiet",
        "-f, --force", "--repair", "--no-fsync", "-v, --verbose", "--metalink", "--metalink-location <CODES>",
    ]

    @Test(
        "top-level help shows the download usage, -V, and the subcommands with get the default",
        arguments: [["--help"], ["-h"], ["help"]]
    )
    func topLevelHelp(arguments: [String]) async throws {
        let run = try await BraidCLI.run(arguments)

        #expect(run.status == .exited(0), "\(run.standardError)")
        let help = run.standardOutput
        let usage = try #require(help.range(of: "USAGE: braid [<options>] <url>"), "\(help)")
        let subcommands = try #require(help.range(of: "\nSUBCOMMANDS:\n"), "\(help)")
        let version = try #require(help.range(of: "\n  -V, --version "), "\(help)")
        #expect(usage.upperBound < version.lowerBound && version.upperBound < subcommands.lowerBound)
        #expect(help.contains("'braid help get' lists the download options"), "\(help)")
        let subcommandList = help[subcommands.lowerBound...]
        #expect(subcommandList.contains("\n  get (default) "))
        #expect(subcommandList.contains("\n  bench "))
        #expect(subcommandList.contains("\n  daemon "))
    }

    @Test(
        "the download's help lists every download option, however it is asked for, URL first included",
        arguments: [["help", "get"], ["get", "--help"], ["get", "-h"], ["https://example.org/f.iso", "--help"]]
    )
    func downloadHelp(arguments: [String]) async throws {
        let run = try await BraidCLI.run(arguments)

        #expect(run.status == .exited(0), "\(run.standardError)")
        let help = run.standardOutput
        let usage = try #require(help.range(of: "USAGE: braid get [<options>] [<url>]"), "\(help)")
        for option in Self.downloadOptions {
            let listed = try #require(help.range(of: "\n  " + option), "\(option) missing from:\n\(help)")
            #expect(listed.lowerBound > usage.upperBound, "\(option)")
        }
        #expect(!help.contains("SUBCOMMANDS:"))
    }

    @Test(
        "a subcommand's help is its own: braid help SUBCOMMAND is braid SUBCOMMAND --help",
        arguments: [
            (["help", "get"], ["get", "--help"], "USAGE: braid get [<options>] [<url>]", "-o, --output <FILE>"),
            (["help", "bench"], ["bench", "-h"], "USAGE: braid bench [<options>] <url>", "--repeat <N>"),
            (["help", "daemon"], ["daemon", "--help"], "USAGE: braid daemon [<options>]", "-d, --dir <DIR>"),
        ]
    )
    func subcommandHelp(helpArguments: [String], flagArguments: [String], usage: String, option: String) async throws {
        let viaHelp = try await BraidCLI.run(helpArguments)
        let viaFlag = try await BraidCLI.run(flagArguments)

        #expect(viaHelp.status == .exited(0) && viaFlag.status == .exited(0))
        #expect(viaHelp.standardOutput == viaFlag.standardOutput)
        #expect(viaHelp.standardOutput.contains(usage), "\(viaHelp.standardOutput)")
        #expect(viaHelp.standardOutput.contains(option), "\(viaHelp.standardOutput)")
        #expect(!viaHelp.standardOutput.contains("SUBCOMMANDS:"))
    }

    @Test("a first word naming a subcommand is that subcommand; after get it is the URL")
    func subcommandNameOrURL() async throws {
        let bench = try await BraidCLI.run(["bench"])
        #expect(bench.status == .exited(2))
        #expect(bench.standardError == "braid: Missing expected argument '<url>'\n", "\(bench.standardError)")

        let get = try await BraidCLI.run(["get", "bench"])
        #expect(get.status == .exited(2))
        #expect(get.standardError.contains("'bench' is not a valid URL"), "\(get.standardError)")
    }

    @Test(
        "--version and -V print Braid's, libcurl's and OpenSSL's versions, one per line",
        arguments: ["--version", "-V"])
    func version(flag: String) async throws {
        let run = try await BraidCLI.run([flag])

        #expect(run.status == .exited(0), "\(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4 && lines.last == "", "three lines: \(run.standardOutput)")
        #expect(lines.first == "braid \(BraidVersion.current)")
        #expect(lines.dropFirst().first?.hasPrefix("libcurl \(BraidVersion.libcurl) (OpenSSL/") == true)
        #expect(lines.dropFirst(2).first.map(String.init) == BraidVersion.openSSL)
        #expect(BraidVersion.openSSL.hasPrefix("OpenSSL "))
        #expect(run.standardError.isEmpty)
    }

    @Test(
        "bad arguments to the download or a subcommand are usage errors, exit status 2, one line on stderr",
        arguments: [
            [], ["--no-such-option"], ["-o", "out.bin"], ["http://127.0.0.1:9/f", "-o", "a", "-d", "b"],
            ["http://127.0.0.1:9/f", "-j", "0"], ["get"], ["get", "http://127.0.0.1:9/f", "-j", "0"], ["bench"],
            ["bench", "http://127.0.0.1:9/f", "--repeat", "0"], ["--no-such-option", "http://127.0.0.1:9/f"],
            ["http://127.0.0.1:9/f", "--no-such-option"], ["get", "http://127.0.0.1:9/f", "--no-such-option"],
            ["bench", "http://127.0.0.1:9/f", "--no-such-option"], ["bench", "http://127.0.0.1:9/f", "-o", "f"],
            ["daemon", "--no-such-option"], ["daemon", "-d"], ["help", "get", "--no-such-option"],
        ]
    )
    func usageErrors(arguments: [String]) async throws {
        let run = try await BraidCLI.run(arguments)

        #expect(run.status == .exited(2), "\(arguments): \(run.standardError)")
        #expect(run.standardError.hasPrefix("braid: "), "\(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count == 1, "\(run.standardError)")
        #expect(run.standardOutput.isEmpty)
    }

    @Test("braid URL and braid get URL take the same options and download the same bytes")
    func getIsTheRootCommand() async throws {
        let content = TestContent(seed: 5, size: 3 << 20)
        let server = TestServer(routes: ["/f": .init(content: content)])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-cli")
        defer { directory.remove() }

        for (name, command) in [("root.bin", [String]()), ("get.bin", ["get"])] {
            let output = directory.appending(name).path
            let run = try await BraidCLI.run(command + [server.url("/f"), "-n", "3", "-o", output, "-q", "--no-fsync"])

            #expect(run.status == .exited(0), "\(command): \(run.standardError)")
            #expect(try content.firstDifference(fromFileAt: output) == nil, "\(command)")
        }
    }

    @Test("braid starts without loading libxml2 or libarchive: a Metalink, a listing or an archive loads them")
    func librariesLoadedOnDemand() async throws {
        let run = try await BraidCLI.run(["--version"], environment: ["LD_DEBUG": "libs"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        // The loader names every library it looks for; libcurl's, at least, is there.
        #expect(run.standardError.contains("libcurl.so.4"), "\(run.standardError.prefix(2000))")
        for library in ["libxml2.so.2", "libarchive.so.13", "libicuuc"] {
            #expect(!run.standardError.contains(library), "\(library) was loaded at start")
        }
    }

    /// A command prefix under which libxml2 cannot be loaded: `unshare` gives `sh` a mount namespace of its own, where
    /// an empty file is bound over the library the loader would find. Nil where no mount namespace is allowed.
    static let hidingLibXML2 = MountNamespace.wrapper(
        script: #"lib=$(/sbin/ldconfig -p | awk '/libxml2\.so\.2 /{print $NF; exit}') && [ -n "$lib" ] "#
            + #"&& mount --bind /dev/null "$lib""#)

    @Test(
        "a Metalink where libxml2 cannot be loaded is one line naming it, exit 3",
        .enabled(if: hidingLibXML2 != nil, "needs a mount namespace to hide libxml2"))
    func missingLibXML2() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-ondemand")
        defer { directory.remove() }
        let document = directory.appending("files.meta4")
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="a.bin"><size>5</size>\
            <url>http://127.0.0.1:9/a.bin</url></file></metalink>
            """.utf8
        ).write(to: document)

        let run = try await BraidCLI.run(
            ["--metalink", document.path, "-d", directory.url.path], through: try #require(Self.hidingLibXML2))

        #expect(run.status == .exited(3), "\(run.standardError)")
        #expect(run.standardError.hasPrefix("braid: cannot load libxml2"), "\(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count == 1, "one line: \(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("a.bin").path))
    }
}
