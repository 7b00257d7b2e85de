#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A `SHA256SUMS` or `MD5SUMS` style file: the digests of several files, one line each, in the GNU coreutils form
/// (`HEX  name`, `HEX *name` for binary mode) or the BSD tagged form (`SHA256 (name) = HEX`). The algorithm of a
/// GNU line is told by its length: 32 digits MD5, 40 SHA-1, 64 SHA-256, 128 SHA-512.
struct ChecksumFile: Sendable, Equatable {
    /// One line: the file it names and its digest.
    struct Entry: Sendable, Equatable {
        var name: String
        var digest: ExpectedDigest
    }

    /// Where it was read from, for error messages.
    let path: String
    let entries: [Entry]
    /// The positions in `entries` of each name as the line gives it (without a leading `./`), and of each last
    /// component: a list of thousands of files looks each up in a file of thousands of lines.
    private let byName: [String: [Int]]
    private let byLastComponent: [String: [Int]]

    /// The longest file read: real ones are a few kilobytes, even for a distribution's thousands of packages.
    static let maximumSize = 16 << 20

    /// Reads and parses the file at `path`; a file that cannot be read or holds no checksum line is a usage error.
    init(readingAt path: String) throws(BraidError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .usage("cannot read the checksum file \(path)", option: .checksumFile)
        }
        guard data.count <= Self.maximumSize else {
            throw .usage("the checksum file \(path) is larger than 16 MiB", option: .checksumFile)
        }
        try self.init(path: path, contents: String(decoding: data, as: UTF8.self))
    }

    /// Parses `contents`; lines that are not checksum lines (comments, signatures around a `SHA256SUMS.asc`) are
    /// skipped.
    init(path: String, contents: String) throws(BraidError) {
        self.path = path
        let entries = contents.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r\n" }
            .compactMap { Self.parse(line: String($0)) }
        guard !entries.isEmpty else {
            throw .usage("\(path) has no checksum lines (HEX  NAME or ALG (NAME) = HEX)", option: .checksumFile)
        }
        self.entries = entries
        var byName: [String: [Int]] = [:]
        var byLastComponent: [String: [Int]] = [:]
        for (position, entry) in entries.enumerated() {
            let name = Self.withoutDotSlash(entry.name)
            byName[name, default: []].append(position)
            byLastComponent[Self.lastComponent(of: name), default: []].append(position)
        }
        self.byName = byName
        self.byLastComponent = byLastComponent
    }

    /// The digest of the file at `path`, its path below the download's directory (`name`, or `sub/name` for a
    /// list's `out=sub/name`): the lines naming that path (with `./` before it or not), else those whose path ends
    /// in it (`dist/name`, `repo/sub/name`), else, for a file in a subdirectory, those naming its file name alone,
    /// as a checksum file made in that subdirectory does (never a line of another directory's file of that name).
    /// Where several lines name it, the strongest algorithm is used; two different digests of one algorithm are
    /// refused as ambiguous, as is a path no line has.
    func digest(for path: String) throws(BraidError) -> ExpectedDigest {
        let name = Self.lastComponent(of: path)
        var matches = lines(byName[path])
        if matches.isEmpty { matches = lines(byLastComponent[name]).filter { $0.name.hasSuffix("/" + path) } }
        if matches.isEmpty && name != path { matches = lines(byName[name]) }
        guard let best = DigestHeaders.preferred(matches.map(\.digest)) else {
            throw .usage("the checksum file \(self.path) has no line for \(path)", option: .checksumFile)
        }
        let rivals = matches.filter { $0.digest.algorithm == best.algorithm && $0.digest.bytes != best.bytes }
        guard rivals.isEmpty else {
            throw .usage(
                "\(self.path) gives \(path) different \(best.algorithm) digests on different lines",
                option: .checksumFile
            )
        }
        return best
    }

    private func lines(_ positions: [Int]?) -> [Entry] {
        (positions ?? []).map { entries[$0] }
    }

    private static func withoutDotSlash(_ name: String) -> String {
        var name = Substring(name)
        while name.hasPrefix("./") { name = name.dropFirst(2) }
        return String(name)
    }

    private static func lastComponent(of path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// One line in either form, or nil if it is neither.
    static func parse(line raw: String) -> Entry? {
        var line = Substring(raw)
        while let last = line.last, last == "\r" || last == "\n" { line = line.dropLast() }
        // GNU escapes a name holding a newline or a backslash, and marks the line with a leading backslash.
        let escaped = line.hasPrefix("\\")
        if escaped { line = line.dropFirst() }
        if let entry = parseTagged(line, escaped: escaped) { return entry }
        return parseUntagged(line, escaped: escaped)
    }

    /// `SHA256 (name) = HEX`.
    private static func parseTagged(_ line: Substring, escaped: Bool) -> Entry? {
        guard let open = line.firstRange(of: " ("), let close = line.ranges(of: ") = ").last,
            open.upperBound <= close.lowerBound,
            let algorithm = DigestAlgorithm(name: String(line[..<open.lowerBound])),
            let bytes = ExpectedDigest.decodeHex(String(line[close.upperBound...])),
            bytes.count == algorithm.byteCount
        else { return nil }
        let name = String(line[open.upperBound..<close.lowerBound])
        return Entry(
            name: escaped ? unescape(name) : name,
            digest: ExpectedDigest(algorithm: algorithm, bytes: bytes, source: .checksumFile)
        )
    }

    /// `HEX  name` (text mode) or `HEX *name` (binary mode).
    private static func parseUntagged(_ line: Substring, escaped: Bool) -> Entry? {
        guard let space = line.firstIndex(of: " ") else { return nil }
        let hex = String(line[..<space])
        let rest = line[line.index(after: space)...]
        guard let marker = rest.first, marker == " " || marker == "*", rest.count > 1,
            let algorithm = algorithm(forHexLength: hex.utf8.count),
            let bytes = ExpectedDigest.decodeHex(hex)
        else { return nil }
        let name = String(rest.dropFirst())
        return Entry(
            name: escaped ? unescape(name) : name,
            digest: ExpectedDigest(algorithm: algorithm, bytes: bytes, source: .checksumFile)
        )
    }

    private static func algorithm(forHexLength length: Int) -> DigestAlgorithm? {
        DigestAlgorithm.allCases.first { $0.byteCount * 2 == length }
    }

    /// Undoes GNU's escaping: `\\` is a backslash, `\n` a newline.
    private static func unescape(_ name: String) -> String {
        var out = ""
        var iterator = name.makeIterator()
        while let character = iterator.next() {
            guard character == "\\", let next = iterator.next() else {
                out.append(character)
                continue
            }
            out.append(next == "n" ? "\n" : next)
        }
        return out
    }
}
