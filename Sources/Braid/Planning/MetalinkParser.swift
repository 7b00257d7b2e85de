import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Reads a Metalink v4 document with `XMLParser` (libxml2 underneath), one element at a time, checking each value
/// as it ends; the first problem stops the parse and becomes the error.
///
/// Only elements in the Metalink namespace are read, and of those only what a download needs: `<file name>`,
/// `<size>`, `<hash type>`, `<pieces length type>` and its `<hash>`es, `<url priority location>`. Everything else
/// (`<metaurl>` torrents, `<publisher>`, other namespaces' extensions) is skipped with its content.
final class MetalinkParser: NSObject, XMLParserDelegate {
    private let source: String
    /// The open elements, by local name; an element outside the Metalink namespace is pushed as `nil`, so that
    /// neither it nor anything inside it matches.
    private var open: [String?] = []
    private var sawRoot = false
    private var files: [Metalink.File] = []
    /// The `<file>` being read, its `<url>`s so far (in document order, sorted by priority at its end), and the
    /// `<pieces>` being read with its hashes so far. Each list is a property of its own, appended to in place: a
    /// copy per append would make a document of many pieces quadratic.
    private var file: Metalink.File?
    private var fileURLs: [Metalink.Mirror] = []
    /// The algorithm (nil for one Braid does not know, whose hashes are skipped) and piece length of `<pieces>`.
    private var pieces: (algorithm: DigestAlgorithm?, length: Int64)?
    private var pieceDigests: [[UInt8]] = []
    /// The text of the element being read, when it is one whose text matters.
    private var text: String?
    private var textBytes = 0
    private var attributes: [String: String] = [:]
    private(set) var failure: BraidError?

    /// The longest text of one element: a URL or a SHA-512 hex digest is far shorter.
    private static let maximumTextBytes = 64 << 10
    /// Metalink 3's namespace, which is a different format.
    private static let version3Namespace = "http://www.metalinker.org/"

    private init(source: String) {
        self.source = source
    }

    static func parse(_ document: [UInt8], source: String) throws(BraidError) -> Metalink {
        // Entities are never expanded: a document declaring any (or any DTD) is refused before libxml2 sees it.
        // A NUL byte cannot occur in UTF-8 XML, and a UTF-16 document would hide a declaration from this search.
        guard !document.contains(0) else { throw Metalink.refusal(source, "is not UTF-8 text") }
        for declaration in ["<!DOCTYPE", "<!ENTITY"] where contains(document, Array(declaration.utf8)) {
            throw Metalink.refusal(source, "declares a DTD or entities (\(declaration)), which Braid refuses")
        }
        let delegate = MetalinkParser(source: source)
        let parser = XMLParser(data: Data(document))
        parser.shouldProcessNamespaces = true
        parser.shouldReportNamespacePrefixes = false
        parser.shouldResolveExternalEntities = false
        parser.delegate = delegate
        let succeeded = parser.parse()
        if let failure = delegate.failure { throw failure }
        guard succeeded else {
            throw Metalink.refusal(source, "is not well-formed XML (line \(parser.lineNumber))")
        }
        guard delegate.sawRoot else { throw Metalink.refusal(source, "is empty") }
        guard !delegate.files.isEmpty else { throw Metalink.refusal(source, "describes no <file>") }
        var names: Set<String> = []
        for file in delegate.files where !names.insert(file.name).inserted {
            throw Metalink.refusal(source, "describes two files named '\(file.name)'")
        }
        return Metalink(files: delegate.files)
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return haystack.withUnsafeBufferPointer { bytes in
            var start = 0
            while start <= bytes.count - needle.count {
                if bytes[start] == needle[0] && bytes[start..<(start + needle.count)].elementsEqual(needle) {
                    return true
                }
                start += 1
            }
            return false
        }
    }

    // MARK: - XMLParserDelegate

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
        attributes attributeDict: [String: String] = [:]
    ) {
        guard failure == nil else { return }
        if !sawRoot {
            sawRoot = true
            guard elementName == "metalink", namespaceURI == Metalink.namespace else {
                if elementName == "metalink" && namespaceURI == Self.version3Namespace {
                    return fail(
                        parser, "is Metalink 3, an older format Braid does not read; use a Metalink 4 file (.meta4)")
                }
                return fail(parser, "is not a Metalink 4 document (its root element is <\(elementName)>)")
            }
        }
        // Below the root, only a `<file>`'s own elements are read.
        let read =
            namespaceURI == Metalink.namespace && open.last != .some(nil) && (open.count < 2 || open[1] == "file")
        let name: String? = read ? elementName : nil
        open.append(name)
        text = nil
        guard let name else { return }
        attributes = attributeDict
        switch (open.count, name) {
        case (2, "file"):
            guard files.count < Metalink.maximumFiles else {
                return fail(parser, "describes more than \(Metalink.maximumFiles) files")
            }
            file = Metalink.File(name: attributeDict["name"] ?? "")
            fileURLs = []
        case (3, "size"), (3, "hash"), (3, "url"):
            text = ""
            textBytes = 0
        case (4, "hash") where open[2] == "pieces":
            text = ""
            textBytes = 0
        case (3, "pieces"):
            startPieces(parser, attributeDict)
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard failure == nil, text != nil else { return }
        textBytes += string.utf8.count
        guard textBytes <= Self.maximumTextBytes else {
            return fail(parser, "has an element whose text is longer than 64 KiB")
        }
        text? += string
    }

    func parser(
        _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
    ) {
        guard failure == nil else { return }
        let name = open.popLast() ?? nil
        let value = (text ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        text = nil
        guard let name else { return }
        do throws(BraidError) {
            switch (open.count + 1, name) {
            case (2, "file"): try endFile()
            case (3, "size"): file?.size = try size(value)
            case (3, "hash"): try endHash(value)
            case (4, "hash") where open.count == 3 && open[2] == "pieces": try endPieceHash(value)
            case (3, "pieces"): try endPieces()
            case (3, "url"): try endURL(value)
            default: break
            }
        } catch {
            fail(parser, error)
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        guard failure == nil else { return }
        failure = Metalink.refusal(source, "is not well-formed XML (line \(parser.lineNumber))")
    }

    private func fail(_ parser: XMLParser, _ problem: String) {
        fail(parser, Metalink.refusal(source, problem))
    }

    private func fail(_ parser: XMLParser, _ error: BraidError) {
        failure = error
        parser.abortParsing()
    }

    // MARK: - Elements

    private func startPieces(_ parser: XMLParser, _ attributes: [String: String]) {
        guard let length = Self.number(attributes["length"]), length >= 1 else {
            return fail(
                parser, "gives <pieces> a length that is not a positive number: '\(attributes["length"] ?? "")'")
        }
        // Pieces in an algorithm Braid does not know are skipped, like such a whole-file hash.
        pieces = (DigestAlgorithm(name: attributes["type"] ?? ""), length)
        pieceDigests = []
    }

    private func endFile() throws(BraidError) {
        guard var done = file else { return }
        file = nil
        try Self.checkName(done.name, source: source)
        // A stable sort: equal priorities keep the document's order.
        done.urls = fileURLs.enumerated().sorted {
            ($0.element.priority, $0.offset) < ($1.element.priority, $1.offset)
        }.map(\.element)
        fileURLs = []
        if let pieces = done.pieces {
            guard let size = done.size else {
                throw Metalink.refusal(source, "gives piece hashes for \(done.name) but not its size")
            }
            do {
                try pieces.validate(totalLength: size)
            } catch {
                throw Metalink.refusal(source, "does not describe \(done.name) consistently: \(error.message)")
            }
        }
        files.append(done)
    }

    private func size(_ value: String) throws(BraidError) -> Int64 {
        guard let size = Self.number(value), size <= RemoteResource.maximumLength else {
            throw Metalink.refusal(source, "gives a size that is not a number of bytes up to 2^53: '\(value)'")
        }
        return size
    }

    private func endHash(_ value: String) throws(BraidError) {
        guard let algorithm = DigestAlgorithm(name: attributes["type"] ?? "") else { return }
        file?.hashes.append(
            ExpectedDigest(algorithm: algorithm, bytes: try digest(value, algorithm), source: .metalink))
    }

    private func endPieceHash(_ value: String) throws(BraidError) {
        guard let algorithm = pieces?.algorithm else { return }
        guard pieceDigests.count < Metalink.maximumPieces else {
            throw Metalink.refusal(source, "lists more than \(Metalink.maximumPieces) pieces for one file")
        }
        pieceDigests.append(try digest(value, algorithm))
    }

    private func endPieces() throws(BraidError) {
        guard let read = pieces else { return }
        pieces = nil
        let digests = pieceDigests
        pieceDigests = []
        guard let algorithm = read.algorithm else { return }
        // Of several `<pieces>`, the strongest algorithm is kept.
        if let kept = file?.pieces, kept.algorithm.strength >= algorithm.strength { return }
        file?.pieces = PieceHashes(algorithm: algorithm, pieceLength: read.length, digests: digests)
    }

    private func endURL(_ value: String) throws(BraidError) {
        guard file != nil else { return }
        guard fileURLs.count < Metalink.maximumURLs else {
            throw Metalink.refusal(source, "lists more than \(Metalink.maximumURLs) URLs for one file")
        }
        var priority = Metalink.defaultPriority
        if let text = attributes["priority"] {
            guard let number = Self.number(text), (1...Int64(Metalink.defaultPriority)).contains(number) else {
                throw Metalink.refusal(source, "gives a URL a priority that is not between 1 and 999999: '\(text)'")
            }
            priority = Int(number)
        }
        guard !value.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw Metalink.refusal(source, "lists a URL containing a space or a control character")
        }
        let scheme = value.prefix { $0 != ":" }.lowercased()
        // Other schemes (a torrent's magnet:, rsync:) are not fetched by Braid.
        guard ["http", "https", "ftp"].contains(scheme), value.dropFirst(scheme.count).hasPrefix("://") else { return }
        let location = attributes["location"].map { $0.lowercased() }.flatMap { code in
            code.count == 2 && code.allSatisfy { $0 >= "a" && $0 <= "z" } ? code : nil
        }
        fileURLs.append(Metalink.Mirror(url: value, priority: priority, location: location))
    }

    private func digest(_ hex: String, _ algorithm: DigestAlgorithm) throws(BraidError) -> [UInt8] {
        guard let bytes = ExpectedDigest.decodeHex(hex), bytes.count == algorithm.byteCount else {
            throw Metalink.refusal(
                source, "gives a \(algorithm) hash that is not \(algorithm.byteCount * 2) hexadecimal digits")
        }
        return bytes
    }

    /// A decimal number of at most 18 digits and nothing else (no sign, no blanks, no exponent).
    private static func number(_ text: String?) -> Int64? {
        guard let text, (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        return Int64(text)
    }

    /// Refuses a name that could write outside the directory it is saved into, or that no file system takes.
    static func checkName(_ name: String, source: String) throws(BraidError) {
        guard !name.isEmpty else { throw Metalink.refusal(source, "has a <file> without a name") }
        let shown = "'\(name)'"
        guard name.utf8.count <= 4096 else {
            throw Metalink.refusal(source, "names a file with a path longer than 4096 bytes")
        }
        guard !name.hasPrefix("/") else {
            throw Metalink.refusal(source, "names a file by an absolute path, \(shown)")
        }
        guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw Metalink.refusal(source, "names a file with a control character, \(shown)")
        }
        for component in name.split(separator: "/", omittingEmptySubsequences: false) {
            guard !component.isEmpty, component != ".", component != ".." else {
                throw Metalink.refusal(
                    source, "names a file with an empty, '.' or '..' path component, \(shown)")
            }
            guard component.utf8.count <= 255 else {
                throw Metalink.refusal(source, "names a file with a path component longer than 255 bytes")
            }
        }
    }
}
