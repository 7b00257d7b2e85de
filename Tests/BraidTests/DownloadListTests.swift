import Braid
import Testing

/// The list format `braid -i FILE` reads: one URL per line, tab-separated mirrors, indented `key=value` options,
/// comments and blank lines ignored, and every mistake reported with its line number.
@Suite("download list")
struct DownloadListTests {
    static let sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

    @Test("comments, blank and whitespace-only lines are skipped; each URL remembers its line")
    func commentsAndBlankLines() throws {
        let text = """
            # downloads for the release

            https://example.org/a.iso
               \t
              # an indented comment
            http://example.org/b.bin
            """

        let list = try DownloadList(parsing: text)

        #expect(list.entries.map(\.urls) == [["https://example.org/a.iso"], ["http://example.org/b.bin"]])
        #expect(list.entries.map(\.line) == [3, 6])
        #expect(list.entries.allSatisfy { $0.output == nil && $0.checksum == nil && $0.connections == nil })
        #expect(list.entries.allSatisfy { $0.headers.isEmpty })
    }

    @Test("CR LF line endings parse like LF, options included")
    func crlf() throws {
        let text = "https://example.org/a.iso\r\n  out=alpha.iso\r\n\r\nhttps://example.org/b.bin\r\n"

        let list = try DownloadList(parsing: text)

        #expect(list.entries.map(\.urls) == [["https://example.org/a.iso"], ["https://example.org/b.bin"]])
        #expect(list.entries[0].output == "alpha.iso")
        #expect(list.entries.map(\.line) == [1, 4])
    }

    @Test("out= takes a relative path of plain names, as aria2c's does")
    func outputPath() throws {
        let list = try DownloadList(parsing: "https://example.org/a\n  out=tokenizer/vocab.json\n")

        #expect(list.entries[0].output == "tokenizer/vocab.json")
    }

    @Test("out= and dir= may name a dotfile, as a model repository's .gitattributes")
    func dotfiles() throws {
        let list = try DownloadList(
            parsing: "https://example.org/a\n  out=.gitattributes\nhttps://example.org/b\n  dir=.cache\n  out=x.json\n")

        #expect(list.entries.map(\.outputPath) == [".gitattributes", ".cache/x.json"])
    }

    @Test(
        "dir= takes a relative path below the directory, as the lists written for aria2c give it; . or none is the directory"
    )
    func directory() throws {
        let list = try DownloadList(
            parsing: """
                https://example.org/a
                  dir=onnx/fp16
                  out=model.onnx
                https://example.org/b
                  dir=./text/
                https://example.org/c
                  dir=
                  out=README.md
                https://example.org/d
                  dir=.
                """)

        #expect(list.entries.map(\.directory) == ["onnx/fp16", "text", nil, nil])
        #expect(list.entries.map(\.outputPath) == ["onnx/fp16/model.onnx", nil, "README.md", nil])
    }

    @Test("a lone CR breaks a line as LF does, and characters beyond ASCII stay whole")
    func loneCRAndUnicode() throws {
        let text = "https://example.org/é.iso\r  out=naïve.iso\r\r\nhttps://例え.jp/b.bin\thttps://example.org/ß"

        let list = try DownloadList(parsing: text)

        #expect(
            list.entries.map(\.urls) == [
                ["https://example.org/é.iso"], ["https://例え.jp/b.bin", "https://example.org/ß"],
            ])
        #expect(list.entries[0].output == "naïve.iso")
        #expect(list.entries.map(\.line) == [1, 4])

        // A combining mark after a line break starts a line of its own (here one that is not a URL), not the break's.
        let error = #expect(throws: BraidError.self) { try DownloadList(parsing: text + "\n\u{301}x") }
        #expect(error?.message.hasPrefix("line 5: ") == true, "\(error?.message ?? "")")
    }

    @Test("indented key=value lines set the options of the URL above them")
    func options() throws {
        let text = """
            https://example.org/a.iso
              out=alpha.iso
              checksum=sha-256=\(Self.sha256)
            \tconnections=4
              header=Authorization: Bearer t=1
              HEADER = X-Trace: yes
              limit-rate=1.5M
            https://example.org/b.bin
              connections=1
              limit-rate=0
            https://example.org/c.bin
              connections=AUTO
            """

        let list = try DownloadList(parsing: text)

        let first = list.entries[0]
        #expect(first.output == "alpha.iso")
        #expect(first.checksum?.algorithm == .sha256)
        #expect(first.checksum?.hex == Self.sha256)
        #expect(first.checksum?.source == .user)
        #expect(first.connections == 4)
        #expect(first.headers == ["Authorization: Bearer t=1", "X-Trace: yes"], "only the first = splits")
        #expect(first.rateLimit == .some(3 << 19))
        #expect(list.entries[1].connections == 1)
        #expect(list.entries[1].rateLimit == .some(nil), "0 lifts the list's limit for this entry")
        #expect(list.entries[2].automaticConnections && list.entries[2].connections == nil)
        #expect(!first.automaticConnections)
        #expect(list.entries[1].output == nil, "options do not leak into the next entry")
    }

    @Test("tab-separated URLs on one line are one file with mirrors, the first being the URL")
    func mirrors() throws {
        let text = "https://one.example/f.bin\thttps://two.example/f.bin\t\thttps://three.example/f.bin \n"

        let list = try DownloadList(parsing: text)

        #expect(list.entries.count == 1)
        #expect(
            list.entries[0].urls == [
                "https://one.example/f.bin", "https://two.example/f.bin", "https://three.example/f.bin",
            ])
    }

    @Test("a UTF-8 byte-order mark at the start, as Windows editors write one, is no part of the first line")
    func byteOrderMark() throws {
        let list = try DownloadList(
            parsing: "\u{FEFF}https://example.org/a\r\n  out=a.bin\r\nhttps://example.org/b\r\n")
        #expect(list.entries.map(\.urls) == [["https://example.org/a"], ["https://example.org/b"]])
        #expect(list.entries.map(\.line) == [1, 3])
        #expect(list.entries[0].output == "a.bin")

        let commented = try DownloadList(parsing: "\u{FEFF}# made on Windows\nhttps://example.org/a")
        #expect(commented.entries.map(\.line) == [2])
        #expect(try DownloadList(parsing: "\u{FEFF}").entries.isEmpty)
    }

    @Test("an empty list, or one of comments only, has no entries")
    func empty() throws {
        #expect(try DownloadList(parsing: "").entries.isEmpty)
        #expect(try DownloadList(parsing: "# nothing yet\n\n").entries.isEmpty)
    }

    @Test(
        "every malformed line is a usage error that names its line",
        arguments: [
            ("  out=a.bin\nhttps://example.org/a", 1, "must follow a URL"),
            ("https://example.org/a\n\n  out", 3, "key=value"),
            ("https://example.org/a\n  speed=9", 2, "unknown option 'speed'"),
            ("https://example.org/a\n  checksum=sha-256=abc", 2, "64 hexadecimal digits"),
            ("https://example.org/a\n  checksum=crc32=00000000", 2, "unknown checksum algorithm"),
            ("https://example.org/a\n  checksum=0123456789abcdef0123456789abcdef", 2, "ALG=HEX"),
            ("https://example.org/a\n  connections=0", 2, "1 to 1024"),
            ("https://example.org/a\n  connections=1025", 2, "1 to 1024"),
            ("https://example.org/a\n  connections=four", 2, "1 to 1024 or auto"),
            ("https://example.org/a\n  header=NoColon", 2, "Name: value"),
            ("https://example.org/a\n  limit-rate=fast", 2, "not a rate"),
            ("# one\n# two\nhttps://example.org/a\n  out=../x", 4, "has a '..' component"),
            ("https://example.org/a\n  out=/etc/passwd", 2, "is an absolute path"),
            ("https://example.org/a\n  out=dir//x.bin", 2, "has an empty component"),
            ("https://example.org/a\n  out=dir/./x.bin", 2, "has a '.' component"),
            ("https://example.org/a\n  out=dir/-x", 2, "relative path of plain names"),
            ("https://example.org/a\n  out=-x", 2, "relative path of plain names"),
            ("https://example.org/a\n  out=", 2, "is empty"),
            ("https://example.org/a\n  dir=/srv/models", 2, "dir= takes a relative path of plain names"),
            ("https://example.org/a\n  dir=a/../../x", 2, "has a '..' component"),
            ("https://example.org/a\n  dir=..", 2, "has a '..' component"),
            ("https://example.org/a\n  dir=a//b", 2, "has an empty component"),
            ("https://example.org/a\nthis is garbage", 2, "'this is garbage' is not a valid URL"),
            ("https://example.org/a\n\u{FEFF}https://example.org/b", 2, "'\\u{FEFF}https://example.org/b' is not"),
            ("http://[::1/a", 1, "'http://[::1/a' is not a valid URL"),
            ("https://example.org/a\n# c\n\nftp://example.org/x", 4, "only http and https URLs are supported"),
            ("file:///etc/passwd", 1, "only http and https URLs are supported, got 'file:'"),
            ("example.org/a.iso", 1, "has no scheme; did you mean 'http://example.org/a.iso'?"),
            ("https://example.org/a b.iso", 1, "it has a space, which a URL writes as %20"),
            ("https://example.org:999999/a", 1, "its port is not from 1 to 65535"),
            ("https:///a", 1, "has no host"),
            ("https://example.org/a\n  out=a\nhttps://one.example/b\tftp://two.example/b", 3, "got 'ftp:'"),
            ("https://one.example/b\thttps://two.example:0/b", 1, "its port is not from 1 to 65535"),
        ] as [(String, Int, String)]
    )
    func errors(text: String, line: Int, explanation: String) {
        #expect {
            try DownloadList(parsing: text)
        } throws: { error in
            guard let error = error as? BraidError else { return false }
            return error.code == .usage && error.message.hasPrefix("line \(line): ")
                && error.message.contains(explanation)
        }
    }

    @Test("a URL with a control character is refused with its line, the character escaped")
    func controlCharacter() {
        let error = #expect(throws: BraidError.self) {
            try DownloadList(parsing: "https://example.org/a\n\nhttps://example.org/b\u{1B}]0;title\u{7}")
        }
        #expect(error?.code == .usage)
        #expect(
            error?.message.hasPrefix("line 3: 'https://example.org/b\\x1B]0;title\\x07' is not a valid URL") == true)
    }

    @Test("valid URLs of every form pass: ports at the ends of their range, IPv6, userinfo, query, beyond ASCII")
    func validURLs() throws {
        let urls = [
            "http://127.0.0.1:1/a", "https://example.org:65535/a?x=1&y=%20#f", "http://[::1]:8080/a",
            "https://user:secret@example.org/a", "https://例え.jp/b.bin", "HTTPS://EXAMPLE.ORG/A",
        ]
        let list = try DownloadList(parsing: urls.joined(separator: "\n"))
        #expect(list.entries.map(\.urls) == urls.map { [$0] })
    }

    @Test("proxy= sets the entry's proxy, empty for none; a proxy with another scheme names the line")
    func proxy() throws {
        let list = try DownloadList(
            parsing: """
                https://example.org/a.iso
                  proxy=socks5h://user:pw@127.0.0.1:1080
                https://example.org/b.iso
                  proxy=
                https://example.org/c.iso
                """
        )
        #expect(list.entries.map(\.proxy) == ["socks5h://user:pw@127.0.0.1:1080", "", nil])

        let error = #expect(throws: BraidError.self) {
            try DownloadList(parsing: "https://example.org/a.iso\n  proxy=socks4://user:secret@proxy:1080")
        }
        #expect(error?.message.hasPrefix("line 2:") == true)
        #expect(error?.message.contains("secret") == false)
    }
}
