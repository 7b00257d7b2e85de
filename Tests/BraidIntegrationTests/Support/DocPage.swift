import Foundation

/// One Markdown page of the documentation, read as `DocExamplesTests` needs it: its fenced blocks with the commands
/// they hold, its links, and the anchors its headings make.
struct DocPage {
    /// A fenced code block: ```` ```sh ````, or ```` ```text file=NAME ```` for a file the page's commands use.
    struct Block {
        /// The info string's first word (`sh`, `text`, `swift`), empty for none.
        let language: String
        /// The `file=NAME` of the info string: the block is that file's content.
        let fileName: String?
        /// The block's lines, each ending in a newline.
        let text: String
        /// The page's line number of the block's first line.
        let firstLine: Int

        /// The block's commands that the test runs or skips on purpose: lines (joined across a trailing `\`)
        /// whose command, after any `NAME=value` assignments, is `braid`.
        var commands: [Command] {
            var commands: [Command] = []
            var pending = ""
            var pendingLine = 0
            for (offset, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if pending.isEmpty { pendingLine = firstLine + offset }
                if line.hasSuffix("\\") {
                    pending += line.dropLast() + " "
                    continue
                }
                let whole = pending + line
                pending = ""
                if let command = Command(text: whole, line: pendingLine) { commands.append(command) }
            }
            return commands
        }
    }

    /// A `braid` command line, with what the page says of it in a trailing comment.
    struct Command {
        let text: String
        let line: Int
        /// 0, or N for a line whose comment says `exits N`.
        let expectedStatus: Int32
        /// Why the test does not run it, for a line whose comment says `not run: why`.
        let skipReason: String?

        init?(text: String, line: Int) {
            let words = text.split(separator: " ", omittingEmptySubsequences: true)
            guard let command = words.first(where: { !$0.contains("=") }), command == "braid"
            else { return nil }
            self.text = text
            self.line = line
            let comment = text.range(of: #"\s#\s.*$"#, options: .regularExpression).map { String(text[$0]) } ?? ""
            if let range = comment.range(of: #"exits \d+"#, options: .regularExpression) {
                expectedStatus = Int32(comment[range].dropFirst("exits ".count))!
            } else {
                expectedStatus = 0
            }
            skipReason = comment.range(of: "not run: ").map { String(comment[$0.upperBound...]) }
        }
    }

    let path: String
    let text: String
    let blocks: [Block]
    /// The lines outside fenced blocks, with their line numbers.
    let proseLines: [(number: Int, text: String)]

    init(path: String, in repository: URL) throws {
        self.path = path
        text = try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
        var blocks: [Block] = []
        var prose: [(Int, String)] = []
        var open: (info: Substring, firstLine: Int, lines: [Substring])?
        for (offset, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = offset + 1
            if var block = open {
                if line.trimmingCharacters(in: .whitespaces) == "```" {
                    let words = block.info.split(separator: " ")
                    let file = words.first { $0.hasPrefix("file=") }.map { String($0.dropFirst("file=".count)) }
                    blocks.append(
                        Block(
                            language: words.first.map(String.init) ?? "", fileName: file,
                            text: block.lines.map { $0 + "\n" }.joined(), firstLine: block.firstLine))
                    open = nil
                } else {
                    block.lines.append(line)
                    open = block
                }
            } else if line.hasPrefix("```") {
                open = (line.dropFirst(3), number + 1, [])
            } else {
                prose.append((number, String(line)))
            }
        }
        self.blocks = blocks
        proseLines = prose
    }

    /// The targets of the page's Markdown links and images outside fenced blocks, other than web addresses.
    var links: [String] {
        let pattern = try! NSRegularExpression(pattern: #"\]\(([^)\s]+)\)"#)
        return proseLines.flatMap { _, line in
            pattern.matches(in: line, range: NSRange(line.startIndex..., in: line)).compactMap { match in
                Range(match.range(at: 1), in: line).map { String(line[$0]) }
            }
        }
        .filter { !$0.contains("://") && !$0.hasPrefix("mailto:") }
    }

    /// The anchors GitHub gives the page's headings: lower case, punctuation other than `-` and `_` dropped,
    /// spaces made `-`, and `-1`, `-2`, … after a repeated one.
    var anchors: Set<String> {
        var seen: [String: Int] = [:]
        var anchors: Set<String> = []
        for (_, line) in proseLines where line.hasPrefix("#") {
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            let slug = String(
                title.lowercased().unicodeScalars.compactMap { scalar -> Character? in
                    if scalar == " " { return "-" }
                    if scalar == "-" || scalar == "_" || CharacterSet.alphanumerics.contains(scalar) {
                        return Character(scalar)
                    }
                    return nil
                })
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }
}

extension String {
    /// The link without its `#anchor`, and the anchor (nil when there is none).
    func splitAnchor() -> (path: String, anchor: String?) {
        guard let hash = firstIndex(of: "#") else { return (self, nil) }
        return (String(self[..<hash]), String(self[index(after: hash)...]))
    }
}
