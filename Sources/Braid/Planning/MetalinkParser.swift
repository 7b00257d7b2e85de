import CLibXML2

/// Reads a Metalink v4 document with libxml2's pull reader (`xmlTextReader`), one node at a time, checking each
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
    private var text: String?
    private var textBytes = 0
    private var attributes: [String: String] = [:]

    /// The longest text of one element: a URL or a SHA-512 hex digest is far shorter.
    private static let maximumTextBytes = 64 << 10
    /// The attributes read from an element, the only ones any element in the Metalink namespace is asked for.
    private static let attributeNames = ["name", "type", "length", "priority", "location"]
    /// No network access and no blank text nodes; never `XML_PARSE_NOENT` (entity substitution) nor
    /// `XML_PARSE_DTDLOAD`. libxml2's messages are not printed: these flags, and a structured handler that drops them.
    private static let options = Int32(
        XML_PARSE_NONET.rawValue | XML_PARSE_NOBLANKS.rawValue | XML_PARSE_NOERROR.rawValue
            | XML_PARSE_NOWARNING.rawValue)
    /// Metalink 3's namespace, which is a different format.
    private static let version3Namespace = "http://www.metalinker.org/"

    private init(source: String) {
        self.source = source
    }

    static func parse(_ document: [UInt8], source: String) throws(BraidError) -> Metalink {
        guard !document.isEmpty else { throw Metalink.refusal(source, "is empty") }
        try checkEncodingForm(document, source: source)
        var parser = MetalinkParser(source: source)
        // `withUnsafeBytes` rethrows untyped errors: the refusal comes out as a value.
        let failure = document.withUnsafeBytes { bytes -> BraidError? in
            let reader = xmlReaderForMemory(
                bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil, nil, options)
            guard let reader else { return Metalink.refusal(source, "is not well-formed XML (line 1)") }
            defer { xmlFreeTextReader(reader) }
            xmlTextReaderSetStructuredErrorHandler(reader, braid_xml_ignore_error, nil)
            do throws(BraidError) {
                try parser.read(reader)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
        guard parser.sawRoot else { throw Metalink.refusal(source, "is empty") }
        guard !parser.files.isEmpty else { throw Metalink.refusal(source, "describes no <file>") }
        var names: Set<String> = []
        for file in parser.files where !names.insert(file.name).inserted {
            throw Metalink.refusal(source, "describes two files named '\(file.name)'")
        }
        return Metalink(files: parser.files)
    }

    /// Refuses a document in UTF-16 or UTF-32, which XML allows and libxml2 would detect and read: Braid reads
    /// Metalink in UTF-8 only. Their byte-order marks say so, and without one their markup has NUL bytes, which
    /// UTF-8 XML never has (U+0000 is no XML character). Only the encoding form is looked at here; what the
    /// document declares and contains is checked on libxml2's reading of it (`checkDeclaredEncoding`, `read`).
    private static func checkEncodingForm(_ document: [UInt8], source: String) throws(BraidError) {
        let marks: [(bytes: [UInt8], name: String)] = [
            ([0x00, 0x00, 0xFE, 0xFF], "UTF-32"), ([0xFF, 0xFE, 0x00, 0x00], "UTF-32"),
            ([0xFE, 0xFF], "UTF-16"), ([0xFF, 0xFE], "UTF-16"),
        ]
        if let mark = marks.first(where: { document.starts(with: $0.bytes) }) {
            throw Metalink.refusal(source, "is \(mark.name), not UTF-8")
        }
        guard !document.contains(0) else { throw Metalink.refusal(source, "is not UTF-8 text (it has NUL bytes)") }
    }

    /// Refuses a document whose XML declaration names an encoding other than UTF-8 (`UTF-7`, `ISO-8859-1`, …),
    /// as libxml2 read the declaration: a document in another encoding could spell markup in bytes that no check
    /// of UTF-8 text would recognise. A document without a declaration is UTF-8 by XML's own rule.
    private func checkDeclaredEncoding(_ reader: xmlTextReaderPtr) throws(BraidError) {
        guard let declared = xmlTextReaderConstEncoding(reader).map({ String(cString: $0) }) else { return }
        guard declared.lowercased() == "utf-8" else {
            throw Metalink.refusal(
                source, "declares the encoding '\(PrintableText.sanitised(declared))'; Braid reads UTF-8 only")
        }
    }

    // MARK: - Nodes

    /// Walks the document node by node to its end, so that anything not well-formed after the root is refused too.
    ///
    /// The first node settles the encoding libxml2 read the declaration as (`checkDeclaredEncoding`), and the end
    /// checks it again, for a libxml2 that records it only once the document is read. A document
    /// type declaration is refused as the node libxml2 parsed it into, whatever bytes spelt it: with no DTD there
    /// are no entities to expand (`XML_PARSE_NOENT` is never set, nor `XML_PARSE_DTDLOAD`), and a reference to an
    /// undeclared one is not well-formed.
    private mutating func read(_ reader: xmlTextReaderPtr) throws(BraidError) {
        var first = true
        while true {
            let status = xmlTextReaderRead(reader)
            guard status != 0 else { return try checkDeclaredEncoding(reader) }
            guard status == 1 else {
                throw Metalink.refusal(
                    source, "is not well-formed XML (line \(xmlTextReaderGetParserLineNumber(reader)))")
            }
            if first {
                first = false
                try checkDeclaredEncoding(reader)
            }
            switch UInt32(bitPattern: xmlTextReaderNodeType(reader)) {
            case XML_READER_TYPE_DOCUMENT_TYPE.rawValue:
                throw Metalink.refusal(source, "declares a DTD (<!DOCTYPE>), which Braid refuses")
            case XML_READER_TYPE_ELEMENT.rawValue:
                let name = xmlTextReaderConstLocalName(reader).map { String(cString: $0) } ?? ""
                let namespace = xmlTextReaderConstNamespaceUri(reader).map { String(cString: $0) }
                try startElement(name, namespace: namespace) { attribute in
                    guard let value = xmlTextReaderGetAttribute(reader, Array(attribute.utf8) + [0]) else { return nil }
                    defer { braid_xml_free(value) }
                    return String(cString: value)
                }
                // `<url/>` has no end node of its own.
                if xmlTextReaderIsEmptyElement(reader) == 1 { try endElement() }
            case XML_READER_TYPE_END_ELEMENT.rawValue:
                try endElement()
            case XML_READER_TYPE_TEXT.rawValue, XML_READER_TYPE_CDATA.rawValue,
                XML_READER_TYPE_WHITESPACE.rawValue, XML_READER_TYPE_SIGNIFICANT_WHITESPACE.rawValue:
                guard text != nil, let value = xmlTextReaderConstValue(reader) else { break }
                try characters(String(cString: value))
            default:
                break
            }
        }
    }

    private mutating func startElement(
        _ elementName: String, namespace namespaceURI: String?, attribute: (String) -> String?
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
        text = nil
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
            text = ""
            textBytes = 0
        case (4, "hash") where open[2] == "pieces":
            text = ""
            textBytes = 0
        case (3, "pieces"):
            try startPieces()
        default:
            break
        }
    }

    private mutating func characters(_ string: String) throws(BraidError) {
        guard text != nil else { return }
        textBytes += string.utf8.count
        guard textBytes <= Self.maximumTextBytes else {
            throw Metalink.refusal(source, "has an element whose text is longer than 64 KiB")
        }
        text? += string
    }

    private mutating func endElement() throws(BraidError) {
        let name = open.popLast() ?? nil
        let value = Self.trimmed(text ?? "")
        text = nil
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
