/// The status and header fields of one HTTP response, as libcurl hands them over line by line.
///
/// A new status line starts a new response (a redirect, a `100 Continue`), so only the last response's fields
/// are kept. Names are compared case-insensitively; repeated fields are joined with ", " as RFC 9110 allows.
struct ResponseHeaders: Sendable, Equatable {
    private(set) var status: Int = 0
    /// Whether the response came as a stream of a connection that carries several (HTTP/2 or HTTP/3): ending it
    /// early leaves the connection open, where ending an HTTP/1.x response early closes it.
    private(set) var isMultiplexed = false
    /// Whether a response's head is arriving: its status line came, and the blank line that ends it has not yet. A
    /// request that fails meanwhile failed on the head itself (`TransportFailure.Kind.oversizedHead`).
    private(set) var isHeadOpen = false
    private var fields: [String: String] = [:]

    /// Feeds one header line as libcurl's header callback delivers it. A field line of ASCII (nearly every one) is
    /// taken apart byte by byte, its name lower-cased as it is copied: two strings made, not six.
    mutating func consume(bytes: UnsafeRawBufferPointer) {
        let trimmed = bytes.trimmingASCIISpace(bytes.indices)
        let (start, end) = (trimmed.lowerBound, trimmed.upperBound)
        guard start < end, !bytes[start..<end].contains(where: { $0 >= 0x80 }) else {
            return consume(line: String(decoding: bytes, as: UTF8.self))
        }
        if bytes[start..<end].starts(with: "HTTP/".utf8) {
            return startResponse(statusLine: bytes[start..<end])
        }
        guard let colon = bytes[start..<end].firstIndex(of: 0x3A) else { return }
        let name = String(unsafeUninitializedCapacity: colon - start) { name in
            for index in start..<colon {
                let byte = bytes[index]
                name[index - start] = (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
            }
            return colon - start
        }
        add(name: name, value: String(decoding: bytes[bytes.trimmingASCIISpace((colon + 1)..<end)], as: UTF8.self))
    }

    /// Feeds one raw header line, including its CRLF.
    mutating func consume(line raw: String) {
        let line = raw.trimmingWhitespace()
        // The blank line that ends the head.
        if line.isEmpty { return isHeadOpen = false }
        if line.hasPrefix("HTTP/") {
            return startResponse(statusLine: Array(line.utf8)[...])
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        add(name: line[..<colon].lowercased(), value: String(line[line.index(after: colon)...]).trimmingWhitespace())
    }

    /// Starts the response of `line`, a status line's bytes without its line break (`HTTP/1.1 206 Partial Content`):
    /// its status (0 when it has none that can be read) and no fields yet.
    private mutating func startResponse<Line: Collection<UInt8>>(statusLine line: Line) {
        // Room for a response's dozen fields from the start, not grown field by field: four allocations, not one.
        fields.removeAll(keepingCapacity: true)
        fields.reserveCapacity(16)
        isHeadOpen = true
        let afterVersion = line.drop { $0 != 0x20 }.drop { $0 == 0x20 }
        let code = afterVersion.prefix { $0 != 0x20 }
        status =
            code.count <= 9 && code.allSatisfy { (0x30...0x39).contains($0) }
            ? code.reduce(0) { $0 * 10 + Int($1 - 0x30) } : 0
        isMultiplexed = line.starts(with: "HTTP/2".utf8) || line.starts(with: "HTTP/3".utf8)
    }

    /// Adds a field, its name in lower case; a repeated one is joined to the earlier value.
    private mutating func add(name: String, value: String) {
        if let existing = fields[name] {
            fields[name] = existing + ", " + value
        } else {
            fields[name] = value
        }
    }

    subscript(name: String) -> String? {
        // Names are asked for in lower case nearly always, dozens of times a response: no copy is made for those.
        fields[name.utf8.contains { (0x41...0x5A).contains($0) || $0 >= 0x80 } ? name.lowercased() : name]
    }

    /// The body's length in `Content-Length`; nil without one, or with one that is not a length
    /// (`contentLengthProblem`). The same value repeated (`4096, 4096`, or the field twice) is that value.
    var contentLength: Int64? {
        guard let value = self["content-length"] else { return nil }
        return Self.length(in: value)
    }

    /// What is wrong with a successful (2xx) response's `Content-Length`, when it has one that is no length: not
    /// digits, too large for 64 bits, or values that differ (the field twice, or a list). Such a response is invalid
    /// (RFC 9112, section 6.3): where its body ends cannot be known, and libcurl would wait for the larger length
    /// until the stall timeout, so a request that gets one fails at once, as a server's violation. An error's body is
    /// never kept, and its status says what went wrong: nil for those.
    var contentLengthProblem: String? {
        guard (200..<300).contains(status), let value = self["content-length"], Self.length(in: value) == nil else {
            return nil
        }
        let shown = PrintableText.escapingControlCharacters(String(value.prefix(64))) + (value.count > 64 ? "…" : "")
        return "the server's Content-Length '\(shown)' is not one length"
    }

    /// The one length the field's values (joined with ", " when repeated) all give; nil when they differ or one is
    /// not digits or does not fit in 64 bits.
    private static func length(in value: String) -> Int64? {
        // One value, as nearly every response has: digits only, as `Int64` reads them after a first digit.
        if let first = value.utf8.first, (0x30...0x39).contains(first), let length = Int64(value) { return length }
        var length: Int64?
        for part in value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            let digits = part.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }
            guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }),
                let parsed = Int64(String(decoding: digits.reversed(), as: UTF8.self)),
                length == nil || length == parsed
            else { return nil }
            length = parsed
        }
        return length
    }

    /// The file's length when the body is all of it: a `200`'s `Content-Length`, or a `206`'s complete length when
    /// its range covers the file; nil otherwise, and for an empty file.
    var wholeFileLength: Int64? {
        switch status {
        case 200:
            return contentLength.flatMap { $0 > 0 ? $0 : nil }
        case 206:
            guard let contentRange = self["content-range"].flatMap(ContentRange.init), let range = contentRange.range,
                range.lowerBound == 0, range.upperBound + 1 == contentRange.completeLength
            else { return nil }
            return contentRange.completeLength
        default:
            return nil
        }
    }
}

extension StringProtocol {
    /// The text without the whitespace (Unicode's) at either end.
    func trimmingWhitespace() -> String {
        // ASCII ends are trimmed byte by byte: header lines, manifest fields and lists are ASCII nearly always, and
        // libcurl hands over a dozen header lines per request.
        let text = Substring(self)
        let bytes = text.utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start].isASCIISpace { start = bytes.index(after: start) }
        while start < end, bytes[bytes.index(before: end)].isASCIISpace { end = bytes.index(before: end) }
        if start == end { return "" }
        if bytes[start] < 0x80, bytes[bytes.index(before: end)] < 0x80 { return String(text[start..<end]) }
        return text[start..<end].trimmingUnicodeWhitespace()
    }

    private func trimmingUnicodeWhitespace() -> String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, first.properties.isWhitespace { scalars = scalars.dropFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars = scalars.dropLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}

extension UInt8 {
    /// Whether the byte is ASCII whitespace: a space, a tab, or a line or page break (what Unicode's whitespace is
    /// among ASCII).
    var isASCIISpace: Bool { self == 0x20 || (0x09...0x0D).contains(self) }
}

extension RandomAccessCollection where Element == UInt8, Index == Int {
    /// `range` without the ASCII whitespace at either end of it (`UInt8.isASCIISpace`).
    func trimmingASCIISpace(_ range: Range<Int>) -> Range<Int> {
        var start = range.lowerBound
        var end = range.upperBound
        while start < end, self[start].isASCIISpace { start += 1 }
        while start < end, self[end - 1].isASCIISpace { end -= 1 }
        return start..<end
    }
}
