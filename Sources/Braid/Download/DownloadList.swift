/// A list of downloads, one URL per line, as `braid -i FILE` reads it (the format aria2c users know):
///
/// ```
/// # comments and blank lines are ignored
/// https://example.org/a.iso
///   out=alpha.iso
///   dir=isos
///   checksum=sha-256=9f86d0…
///   connections=4
///   header=Authorization: Bearer …
///   proxy=socks5h://user:password@proxy.example:1080
///   limit-rate=2M
///   cache-peers=http://cache-1:8080/{scheme}/{host}{path},http://cache-2:8080/{scheme}/{host}{path}
/// https://one.example/b.bin	https://two.example/b.bin
/// ```
///
/// Indented `key=value` lines set options for the URL above them. Several URLs on one line, separated by tabs,
/// are mirrors of the same file.
public struct DownloadList: Sendable, Equatable {
    /// One file to download.
    public struct Entry: Sendable, Equatable {
        /// The URL, then its mirrors.
        public var urls: [String]
        /// `out=`: the file's name within the output directory, or its relative path there (`sub/name`, every
        /// component a `SafeName` as it is).
        public var output: String?
        /// `dir=`: the subdirectory of the output directory the file goes in (`sub`, `a/b`, every component a
        /// `SafeName` as it is), as aria2c takes an entry's `dir=` relative to where it runs; nil for the output
        /// directory itself (`dir=`, `dir=.`).
        public var directory: String?
        /// `checksum=ALG=HEX`.
        public var checksum: ExpectedDigest?
        /// `connections=N`.
        public var connections: Int?
        /// `connections=auto`: as `DownloadOptions.automaticConnections`.
        public var automaticConnections = false
        /// `header=Name: value`, repeatable.
        public var headers: [String] = []
        /// `proxy=URL`, as `DownloadOptions.proxy`: this entry's proxy, in place of the one given for the whole
        /// list; empty for none.
        public var proxy: String?
        /// `limit-rate=RATE`, as `DownloadOptions.rateLimit`: this entry's own limit in bytes a second (`512K`,
        /// `10M`; `0` for none), in place of the one given for the whole list.
        public var rateLimit: Int64??
        /// `cache-peers=LIST`, as `DownloadOptions.cachePeers`: this entry's cache peers, in place of the ones given
        /// for the whole list; empty for none.
        public var cachePeers: [CachePeer]?
        /// The line the URL was on, for messages.
        public var line: Int

        /// The file's path below the output directory that `dir=` and `out=` give (`dir/out`); nil when no `out=`
        /// names the file.
        public var outputPath: String? {
            output.map { output in directory.map { "\($0)/\(output)" } ?? output }
        }
    }

    public var entries: [Entry]

    /// Parses the list; a malformed line throws a usage error naming the line. Every URL, mirrors included, is held
    /// here to the rule a single download's is (`DownloadJob.validate(url:)`), so that a list with one Braid cannot
    /// fetch stops before any download, at its line. A UTF-8 byte-order mark at the start, as Windows editors write
    /// one, is skipped: it is no part of the first URL.
    public init(parsing text: String) throws(BraidError) {
        var entries: [Entry] = []
        var number = 0
        let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
        let body = text.utf8.starts(with: byteOrderMark) ? Substring(text.utf8.dropFirst(3)) : Substring(text)
        for line in Self.lines(of: body) {
            number += 1
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if let first = line.utf8.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
                guard !entries.isEmpty else {
                    throw .usage("line \(number): an option line ('\(trimmed)') must follow a URL")
                }
                try Self.apply(option: trimmed, line: number, to: &entries[entries.count - 1])
            } else {
                let urls = line.utf8.split(separator: UInt8(ascii: "\t")).map { Substring($0).trimmingWhitespace() }
                    .filter { !$0.isEmpty }
                for url in urls {
                    do {
                        try DownloadJob.validate(url: url)
                    } catch {
                        throw .usage("line \(number): \(error.message)")
                    }
                }
                entries.append(Entry(urls: urls, line: number))
            }
        }
        self.entries = entries
    }

    /// The lines of `text`, broken at each "\n", "\r\n" or "\r". Found byte by byte: a line break is a grapheme of
    /// its own (as a tab is), so splitting the bytes gives the lines splitting the characters would, without working
    /// out a list's hundreds of thousands of characters one by one.
    private static func lines(of text: Substring) -> [Substring] {
        let bytes = text.utf8
        var lines: [Substring] = []
        var start = bytes.startIndex
        var index = start
        while index != bytes.endIndex {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") else {
                index = bytes.index(after: index)
                continue
            }
            lines.append(Substring(bytes[start..<index]))
            index = bytes.index(after: index)
            if byte == UInt8(ascii: "\r"), index != bytes.endIndex, bytes[index] == UInt8(ascii: "\n") {
                index = bytes.index(after: index)
            }
            start = index
        }
        lines.append(Substring(bytes[start..<index]))
        return lines
    }

    private static func apply(option: String, line: Int, to entry: inout Entry) throws(BraidError) {
        // The first `=` byte, as aria2c reads it.
        guard let equals = option.utf8.firstIndex(of: UInt8(ascii: "=")) else {
            throw .usage("line \(line): expected key=value, got '\(option)'")
        }
        let key = option[..<equals].trimmingWhitespace().lowercased()
        let value = option[option.utf8.index(after: equals)...].trimmingWhitespace()
        switch key {
        case "out":
            do throws(SafeName.Refusal) {
                // A name, or a path below the directory (`tokenizer/vocab.json`), as aria2c takes it: each component
                // a safe name as it is, so that the path is kept as written.
                _ = try SafeName.path(validating: value)
                entry.output = value
            } catch {
                throw .usage(
                    "line \(line): out= takes a file name or a relative path of plain names; '\(value)' \(error.reason)"
                )
            }
        case "dir":
            // aria2c's input files, such as those scripts write for a model repository, give `dir=` relative to
            // where aria2c runs: here it is below the output directory, and never leaves it.
            var path = Substring(value)
            while path.hasPrefix("./") { path = path.dropFirst(2) }
            while path.count > 1 && path.hasSuffix("/") { path = path.dropLast() }
            guard !path.isEmpty && path != "." else {
                entry.directory = nil
                break
            }
            do throws(SafeName.Refusal) {
                let directory = String(path)
                _ = try SafeName.path(validating: directory)
                entry.directory = directory
            } catch {
                throw .usage(
                    "line \(line): dir= takes a relative path of plain names below the directory (-d); '\(value)' "
                        + error.reason)
            }
        case "checksum":
            do {
                entry.checksum = try ExpectedDigest(checksumArgument: value)
            } catch {
                throw .usage("line \(line): \(error.message)")
            }
        case "connections" where value.lowercased() == "auto":
            entry.automaticConnections = true
            entry.connections = nil
        case "connections":
            guard let count = Int(value), count >= 1, count <= 1024 else {
                throw .usage("line \(line): connections= takes a number from 1 to 1024 or auto, got '\(value)'")
            }
            entry.connections = count
            entry.automaticConnections = false
        case "header":
            guard value.contains(":") else { throw .usage("line \(line): header= takes 'Name: value', got '\(value)'") }
            entry.headers.append(value)
        case "proxy":
            var options = DownloadOptions()
            options.proxy = value
            do {
                try options.validate()
            } catch {
                throw .usage("line \(line): \(error.message)")
            }
            entry.proxy = value
        case "limit-rate":
            do {
                entry.rateLimit = .some(try ByteCount.rate(value))
            } catch {
                throw .usage("line \(line): \(error.message)")
            }
        case "cache-peers":
            do {
                entry.cachePeers = try CachePeer.list(parsing: value)
            } catch {
                throw .usage("line \(line): \(error.message)")
            }
        default:
            throw .usage(
                "line \(line): unknown option '\(key)' (use out, dir, checksum, connections, header, proxy, "
                    + "limit-rate or cache-peers)")
        }
    }
}
