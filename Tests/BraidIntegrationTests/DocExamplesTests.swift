import BraidTestSupport
import Foundation
import Testing

/// The documentation's commands run as written, its links lead somewhere, and no page restates the options.
///
/// Every ```` ```sh ```` block of README.md and of `docs/**/*.md` is read line by line (a line ending in `\`
/// continues on the next). A line whose command (after any `NAME=value` assignments) is `braid` runs in bash,
/// as typed, with this build's `braid` first on `PATH`; other lines (`bash scripts/demo`, `swift run …`) are left to
/// the tests of what they run (`DemoScriptTests`, `EmbedExampleTests`, the suite itself). A command passes when
/// it exits 0, or N when the line ends in a comment `# exits N`. A line whose comment says `# not run: why` is
/// skipped; keep those few (a daemon that serves until stopped).
///
/// The placeholders, and what stands in for them here:
///
/// | in the docs | in this test |
/// | --- | --- |
/// | `https://example.org/PATH`, `https://NAME.example.org/PATH` | nginx on 127.0.0.1, plain HTTP |
/// | `https://intranet.example/PATH` | the same nginx over HTTPS, its certificate self-signed |
/// | `ca.pem` | that certificate, in the working directory |
/// | `http://proxy.example:3128` | tinyproxy on 127.0.0.1 |
/// | `socks5h://user:pw@proxy.example:1080` | microsocks on 127.0.0.1, requiring `user` and `pw` |
/// | `example.org` anywhere else (`--noproxy`, a `.netrc` machine, a cookie's domain) | `127.0.0.1` |
/// | `$TOKEN` | `example-token` |
/// | `s3://BUCKET/KEY`, `s3://BUCKET/PREFIX/` | moto's S3 on 127.0.0.1 (`AWS_ENDPOINT_URL`), with a key in `AWS_*` |
///
/// Every PATH the page names is served as the same 4 MiB (`PseudoRandomContent(seed: 0)`, whose SHA-256 is
/// `documentedSHA256`, the digest the examples check against), unless a block of the page gives that file: a
/// fenced block whose info string has `file=NAME` (```` ```text file=downloads.txt ````) is written into the
/// working directory before the page's commands run, and served at `/NAME` too. Every bucket a page names
/// (`s3://my-bucket/…`) is made in moto, private, with each object the page names (64 KiB each), and below each
/// prefix the page names (a key ending in `/`, or none) the files of a small model: `config.json`,
/// `tokenizer.json`, `model-00001-of-00002.safetensors`, `model-00002-of-00002.safetensors`, `onnx/model.onnx` and
/// `README.md`. moto checks no signature here: a wrong key is tested against one that does (`ObjectStorePrefixTests`).
///
/// Each `sh` block runs in a fresh working directory, which is also `HOME` (so `~/Downloads` stays inside it), with
/// an `XDG_STATE_HOME` of its own and no proxy variables from this machine. The lines of one block run in order in
/// the same directory, so a block can show a sequence (download, then `-N` again).
@Suite("Documentation", .serialized)
struct DocExamplesTests {
    /// The SHA-256 of the content served for every path the examples name.
    static let documentedSHA256 = "86f650cdfd245e1e2a086a8466221059a0b9e3b614d6ea7ed0e270854c4a9105"
    static let servedSize = 4 << 20

    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// README.md and every page under docs/, relative to the repository, in a stable order.
    static let pages: [String] = {
        var pages = ["README.md"]
        let docs = repository.appendingPathComponent("docs")
        if let walker = FileManager.default.enumerator(atPath: docs.path) {
            for case let path as String in walker where path.hasSuffix(".md") { pages.append("docs/" + path) }
        }
        return pages.sorted()
    }()

    /// Every Markdown file of the repository whose links are checked: the pages above and the benchmarks' notes.
    static let linkedPages: [String] =
        pages + ["Benchmarks/README.md", "Benchmarks/RESULTS.md", "Tests/Daemon/README.md"]

    @Test("every braid command of a page runs as written and exits as the page says", arguments: pages)
    func commandsRun(page: String) async throws {
        let document = try DocPage(path: page, in: Self.repository)
        let commands = document.blocks.filter { $0.language == "sh" }.flatMap(\.commands)
        guard commands.contains(where: { $0.skipReason == nil }) else { return }

        let fixture = try await Fixture.start(
            proxies: document.text.contains("proxy.example"), objectStore: Self.objectStoreKeys(in: document.text))
        defer { fixture.shutdown() }
        let files = document.blocks.compactMap { block in block.fileName.map { ($0, fixture.substitute(block.text)) } }
        try fixture.serve(pathsIn: fixture.substitute(document.text), files: files)

        for (index, block) in document.blocks.enumerated() where block.language == "sh" {
            let runnable = block.commands.filter { $0.skipReason == nil }
            guard !runnable.isEmpty else { continue }
            let directory = fixture.scratch.appending("\(page.replacingOccurrences(of: "/", with: "_"))-\(index)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for (name, text) in files {
                try Data(text.utf8).write(to: directory.appendingPathComponent(name))
            }
            try FileManager.default.copyItem(
                atPath: fixture.nginx.certificatePath!, toPath: directory.appendingPathComponent("ca.pem").path)

            for command in runnable {
                let script = fixture.substitute(command.text)
                let run = try await ChildProcess.run(
                    "/bin/bash", ["-c", "cd \"$BRAID_DOC_DIRECTORY\" || exit 125\n" + script],
                    environment: fixture.environment(directory: directory), timeout: .seconds(120))
                #expect(
                    run.status == .exited(command.expectedStatus),
                    """
                    \(page):\(command.line): \(command.text)
                    ran as: \(script)
                    stdout: \(run.standardOutput)
                    stderr: \(run.standardError)
                    """)
            }
        }
    }

    /// The keys and prefixes of each bucket `text` names in `s3://` URLs; nil when it names none.
    static func objectStoreKeys(in text: String) -> [String: [String]]? {
        let pattern = try! NSRegularExpression(pattern: #"s3://([a-z0-9.-]+)(/[^\s"'<>()`]*)?"#)
        var keys: [String: [String]] = [:]
        for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            guard let bucket = Range(match.range(at: 1), in: text).map({ String(text[$0]) }) else { continue }
            let key = Range(match.range(at: 2), in: text).map { String(text[$0].dropFirst()) } ?? ""
            keys[bucket, default: []].append(key)
        }
        return keys.isEmpty ? nil : keys
    }

    @Test("the digest the examples check is the served content's")
    func documentedDigest() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-doc-digest")
        defer { directory.remove() }
        let file = directory.appending("content.bin")
        try PseudoRandomContent(seed: 0).write(to: file, size: Self.servedSize)

        let run = try await ChildProcess.run("sha256sum", [file.path])

        #expect(run.standardOutput.hasPrefix(Self.documentedSHA256 + " "), "\(run.standardOutput)")
    }

    @Test("every relative link and image points at an existing file, and every #anchor at a heading there")
    func linksResolve() throws {
        var broken: [String] = []
        for page in Self.linkedPages {
            let document = try DocPage(path: page, in: Self.repository)
            let base = Self.repository.appendingPathComponent(page).deletingLastPathComponent()
            for link in document.links {
                let (path, anchor) = link.splitAnchor()
                let target =
                    path.isEmpty ? Self.repository.appendingPathComponent(page) : base.appendingPathComponent(path)
                guard FileManager.default.fileExists(atPath: target.standardizedFileURL.path) else {
                    broken.append("\(page): \(link) (no such file)")
                    continue
                }
                guard let anchor else { continue }
                let relative = target.standardizedFileURL.path.dropFirst(
                    Self.repository.standardizedFileURL.path.count + 1)
                let linked = try DocPage(path: String(relative), in: Self.repository)
                if !linked.anchors.contains(anchor) { broken.append("\(page): \(link) (no such heading)") }
            }
        }
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }

    @Test("no page has a table of options: option help lives once, in braid's help")
    func noOptionTables() throws {
        var tables: [String] = []
        for page in Self.pages {
            let document = try DocPage(path: page, in: Self.repository)
            for (number, line) in document.proseLines
            where line.range(of: #"^\|\s*`-"#, options: .regularExpression) != nil {
                tables.append("\(page):\(number): \(line)")
            }
        }
        #expect(tables.isEmpty, "\(tables.joined(separator: "\n"))")
    }
}

extension DocExamplesTests {
    /// nginx (with HTTPS), the proxies when a page names one, moto when it names an `s3://` URL, a scratch directory,
    /// and `braid` on a `PATH` of its own.
    struct Fixture {
        let nginx: NginxFixture
        let httpProxy: ProxyFixture?
        let socksProxy: ProxyFixture?
        let moto: MotoServer?
        let scratch: TemporaryDirectory
        let root: URL

        static let socksCredentials = (user: "user", password: "pw")

        /// Fills each bucket of `arguments[0]` (JSON: bucket → keys and prefixes) as the header says.
        static let objectStoreSetup = """
            model = ["config.json", "tokenizer.json", "model-00001-of-00002.safetensors",
                     "model-00002-of-00002.safetensors", "onnx/model.onnx", "README.md"]
            rng = random.Random(0)
            for bucket, keys in json.loads(arguments[0]).items():
                s3.create_bucket(Bucket=bucket)
                for key in keys:
                    for name in ([key + file for file in model] if key == "" or key.endswith("/") else [key]):
                        s3.put_object(Bucket=bucket, Key=name, Body=rng.randbytes(64 << 10))
            """

        static func start(proxies: Bool, objectStore: [String: [String]]? = nil) async throws -> Fixture {
            let scratch = try TemporaryDirectory(prefix: "braid-doc-examples")
            let root = scratch.appending("www")
            let bin = scratch.appending("bin")
            var started: (NginxFixture?, ProxyFixture?, ProxyFixture?, MotoServer?) = (nil, nil, nil, nil)
            do {
                try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
                try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
                try FileManager.default.createSymbolicLink(
                    atPath: bin.appendingPathComponent("braid").path, withDestinationPath: BraidCLI.path)
                started.0 = try await NginxFixture.start(.init(documentRoot: root, enablesTLS: true))
                if proxies {
                    started.1 = try await ProxyFixture.start(.http)
                    started.2 = try await ProxyFixture.start(.socks5(credentials: socksCredentials))
                }
                if let objectStore {
                    try #require(
                        await MotoS3Tests.isAvailable(), "python3 with moto[server] and boto3: run scripts/install-deps"
                    )
                    let keys = String(decoding: try JSONSerialization.data(withJSONObject: objectStore), as: UTF8.self)
                    started.3 = try await MotoServer.start(setup: objectStoreSetup, arguments: [keys], in: scratch)
                }
                return Fixture(
                    nginx: started.0!, httpProxy: started.1, socksProxy: started.2, moto: started.3, scratch: scratch,
                    root: root)
            } catch {
                started.0?.shutdown()
                started.1?.shutdown()
                started.2?.shutdown()
                started.3?.stop()
                scratch.remove()
                throw error
            }
        }

        func shutdown() {
            nginx.shutdown()
            httpProxy?.shutdown()
            socksProxy?.shutdown()
            moto?.stop()
            scratch.remove()
        }

        /// `text` with the placeholders replaced by this fixture's servers (see the table above).
        func substitute(_ text: String) -> String {
            var text = text
            let replacements: [(String, String)] = [
                (#"https://intranet\.example"#, "https://127.0.0.1:\(nginx.tlsPort!)"),
                (#"https://([a-z0-9-]+\.)?example\.org"#, "http://127.0.0.1:\(nginx.port)"),
                (#"proxy\.example:3128"#, "127.0.0.1:\(httpProxy?.port ?? 9)"),
                (#"proxy\.example:1080"#, "127.0.0.1:\(socksProxy?.port ?? 9)"),
                (#"\bexample\.org\b"#, "127.0.0.1"),
            ]
            for (pattern, replacement) in replacements {
                text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
            }
            return text
        }

        /// Serves the standard content at every path of this server that `text` names, and `files` at `/NAME`.
        func serve(pathsIn text: String, files: [(name: String, text: String)]) throws {
            let pattern = try NSRegularExpression(pattern: #"https?://127\.0\.0\.1:\d+(/[^\s"'<>)?#`]*)"#)
            let range = NSRange(text.startIndex..., in: text)
            for match in pattern.matches(in: text, range: range) {
                guard let pathRange = Range(match.range(at: 1), in: text) else { continue }
                let path = String(text[pathRange])
                guard path.count > 1, !path.hasSuffix("/") else { continue }
                let file = root.appendingPathComponent(String(path.dropFirst()))
                guard !FileManager.default.fileExists(atPath: file.path) else { continue }
                try FileManager.default.createDirectory(
                    at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try PseudoRandomContent(seed: 0).write(to: file, size: DocExamplesTests.servedSize)
            }
            for (name, text) in files {
                try Data(text.utf8).write(to: root.appendingPathComponent(name))
            }
        }

        /// The environment of one block's commands: `braid` of this build first on `PATH`, `HOME` in the block's
        /// directory, no proxy variables of this machine's, and with a page naming `s3://` URLs, moto's endpoint and a
        /// key in the `AWS_*` variables.
        func environment(directory: URL) -> [String: String] {
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
            environment["PATH"] = scratch.appending("bin").path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            environment["HOME"] = directory.path
            environment["XDG_STATE_HOME"] = directory.appendingPathComponent(".state").path
            environment["BRAID_DOC_DIRECTORY"] = directory.path
            environment["TOKEN"] = "example-token"
            if let moto { environment.merge(moto.environment()) { _, new in new } }
            return environment
        }
    }
}
