/// Reads a Metalink v4 document with libxml2's pull reader (`XMLPullReader`), one node at a time, checking each
/// value as its element ends; the first problem stops the read and becomes the error.
///
/// Only elements in the Metalink namespace are read, and of those only what a download needs: `<file name>`,
/// `<size>`, `<hash type>`, `<pieces length type>` and its `<hash>`es, `<url priority location>`. Everything else
/// (`<metaurl>` torrents, `<publisher>`, other namespaces' extensions) is skipped with its content.
struct MetalinkParser {
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
    private var text = XMLPullReader.ElementText(maximumBytes: Self.maximumTextBytes)
    private var attributes: [String: String] = [:]

    /// The longest text of one element: a URL or a SHA-512 hex digest is far shorter.
    private static let maximumTextBytes = 64 << 10
    /// The attributes read from an element, the only ones any element in the Metalink namespace is asked for.
    private static let attributeNames = ["name", "type", "length", "priority", "location"]
    /// Metalink 3's namespace, which is a different format.
    private static let version3Namespace = "http://www.metalinker.org/"

    private init(source: String) {
        self.source = source
    }

    static func parse(_ document: [UInt8], source: String) throws(BraidError) -> Metalink {
        var parser = MetalinkParser(source: source)
        try XMLPullReader.read(document, refusal: { Metalink.refusal(source, $0) }) { node throws(BraidError) in
            switch node {
            case let .start(name, namespace, attribute): try parser.startElement(name, namespace: namespace, attribute)
            case .end: try parser.endElement()
            case let .text(value): try parser.characters(value)
            }
        }
        guard parser.sawRoot else { throw Metalink.refusal(source, "is empty") }
        guard !parser.files.isEmpty else { throw Metalink.refusal(source, "describes no <file>") }
        var names: Set<String> = []
        for file in parser.files where !names.insert(file.name).inserted {
            throw Metalink.refusal(source, "describes two files named '\(file.name)'")
        }
        return Metalink(files: parser.files)
    }

    // MARK: - Nodes

    private mutating func startElement(
        _ elementName: String, namespace namespaceURI: String?, _ attribute: (String) -> String?
    ) throws(BraidError) {
        if !sawRoot {
            sawRoot = true
            guard elementName == "metalink", namespaceURI == Metalink.namespace else {
                if elementName == "metalink" && namespaceURI == Self.version3Namespace {
                    throw Metalink.refusal(
                        source, "is Metalink 3, an older format Braid does not read; use a Metalink 4 file (.meta4)")
                }
                throw Metalink.refusal(source, "is not a Metalink 4 document (its root element is <\(elementName)>)")
            }
        }
        // Below the root, only a `<file>`'s own elements are read.
        let read =
            namespaceURI == Metalink.namespace && open.last != .some(nil) && (open.count < 2 || open[1] == "file")
        let name: String? = read ? elementName : nil
        open.append(name)
        text.stop()
        guard let name else { return }
        attributes = [:]
        for key in Self.attributeNames {
            if let value = attribute(key) { attributes[key] = value }
        }
        switch (open.count, name) {
        case (2, "file"):
            guard files.count < Metalink.maximumFiles else {
                throw Metalink.refusal(source, "describes more than \(Metalink.maximumFiles) files")
            }
            file = Metalink.File(name: attributes["name"] ?? "")
            fileURLs = []
        case (3, "size"), (3, "hash"), (3, "url"):
            text.start()
        case (4, "hash") where open[2] == "pieces":
            text.start()
        case (3, "pieces"):
            try startPieces()
        default:
            break
        }
    }

    private mutating func characters(_ string: String) throws(BraidError) {
        guard text.append(string) else {
            throw Metalink.refusal(source, "has an element whose text is longer than 64 KiB")
        }
    }

    private mutating func endElement() throws(BraidError) {
        let name = open.popLast() ?? nil
        let value = Self.trimmed(text.take() ?? "")
        guard let name else { return }
        switch (open.count + 1, name) {
        case (2, "file"): try endFile()
        case (3, "size"):
            let size = try size(value)
            file?.size = size
        case (3, "hash"): try endHash(value)
        case (4, "hash") where open.count == 3 && open[2] == "pieces": try endPieceHash(value)
        case (3, "pieces"): try endPieces()
        case (3, "url"): try endURL(value)
        default: break
        }
    }

    /// The text without the white space (Unicode's, line breaks included) around it.
    private static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }

    // MARK: - Elements

    private mutating func startPieces() throws(BraidError) {
        guard let length = Self.number(attributes["length"]), length >= 1 else {
            throw Metalink.refusal(
                source, "gives <pieces> a length that is not a positive number: '\(attributes["length"] ?? "")'")
        }
        // Pieces in an algorithm Braid does not know are skipped, like such a whole-file hash.
        pieces = (DigestAlgorithm(name: attributes["type"] ?? ""), length)
        pieceDigests = []
    }

    private mutating func endFile() throws(BraidError) {
        guard var done = file else { return }
        file = nil
        done.name = try Self.safeName(done.name, source: source)
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

    private mutating func endHash(_ value: String) throws(BraidError) {
        guard let algorithm = DigestAlgorithm(name: attributes["type"] ?? "") else { return }
        let bytes = try digest(value, algorithm)
        file?.hashes.append(ExpectedDigest(algorithm: algorithm, bytes: bytes, source: .metalink))
    }

    private mutating func endPieceHash(_ value: String) throws(BraidError) {
        guard let algorithm = pieces?.algorithm else { return }
        guard pieceDigests.count < Metalink.maximumPieces else {
            throw Metalink.refusal(source, "lists more than \(Metalink.maximumPieces) pieces for one file")
        }
        pieceDigests.append(try digest(value, algorithm))
    }

    private mutating func endPieces() throws(BraidError) {
        guard let read = pieces else { return }
        pieces = nil
        let digests = pieceDigests
        pieceDigests = []
        guard let algorithm = read.algorithm else { return }
        // Of several `<pieces>`, the strongest algorithm is kept.
        if let kept = file?.pieces, kept.algorithm.strength >= algorithm.strength { return }
        file?.pieces = PieceHashes(algorithm: algorithm, pieceLength: read.length, digests: digests)
    }

    private mutating func endURL(_ value: String) throws(BraidError) {
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

    /// The name made safe (`SafeName.path(sanitising:)`): refused when it could write outside the directory it is
    /// saved into, its characters replaced when they would read as something else.
    static func safeName(_ name: String, source: String) throws(BraidError) -> String {
        guard !name.isEmpty else { throw Metalink.refusal(source, "has a <file> without a name") }
        do throws(SafeName.Refusal) {
            return SafeName.joined(try SafeName.path(sanitising: name))
        } catch {
            throw Metalink.refusal(source, "names a file by a path that \(error.reason), '\(name)'")
        }
    }
}
