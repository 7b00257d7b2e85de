import COnDemand

/// Walks an XML document from outside (a Metalink, an S3 listing) with libxml2's pull reader (`xmlTextReader`),
/// node by node, under the one set of rules every such document is read by: UTF-8 only, no DTD (so no entities to
/// expand), no network access, and libxml2's own messages dropped. The first problem stops the walk.
enum XMLPullReader {
    /// One node of the document, in document order. An empty element (`<url/>`) is a start and then an end.
    enum Node {
        /// An element opens: its local name, its namespace URI, and a look-up of its attributes by name, valid only
        /// during the call.
        case start(name: String, namespace: String?, attribute: (String) -> String?)
        case end
        /// Text, CDATA or white space inside the element that is open.
        case text(String)
    }

    /// No network access and no blank text nodes; never `XML_PARSE_NOENT` (entity substitution) nor
    /// `XML_PARSE_DTDLOAD`. libxml2's messages are not printed: these flags, and a structured handler that drops them.
    private static let options = Int32(
        XML_PARSE_NONET.rawValue | XML_PARSE_NOBLANKS.rawValue | XML_PARSE_NOERROR.rawValue
            | XML_PARSE_NOWARNING.rawValue)

    /// Reads `document` to its end, handing each node to `visit`, so that anything not well-formed after the root is
    /// refused too.
    ///
    /// - Parameter refusal: makes the error for a document refused here, from the end of a sentence ("is not
    ///   well-formed XML (line 3)").
    static func read(
        _ document: [UInt8],
        refusal: (String) -> BraidError,
        _ visit: (Node) throws(BraidError) -> Void
    ) throws(BraidError) {
        guard !document.isEmpty else { throw refusal("is empty") }
        try checkEncodingForm(document, refusal: refusal)
        try OnDemandLibrary.xml2.load(for: "to read XML")
        // `withUnsafeBytes` rethrows untyped errors: the failure comes out as a value.
        let failure = document.withUnsafeBytes { bytes -> BraidError? in
            let reader = xmlReaderForMemory(
                bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil, nil, options)
            guard let reader else { return refusal("is not well-formed XML (line 1)") }
            defer { xmlFreeTextReader(reader) }
            xmlTextReaderSetStructuredErrorHandler(reader, braid_xml_ignore_error, nil)
            do throws(BraidError) {
                try walk(reader, refusal: refusal, visit)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Refuses a document in UTF-16 or UTF-32, which XML allows and libxml2 would detect and read: Braid reads XML
    /// in UTF-8 only. Their byte-order marks say so, and without one their markup has NUL bytes, which UTF-8 XML
    /// never has (U+0000 is no XML character). Only the encoding form is looked at here; what the document declares
    /// and contains is checked on libxml2's reading of it (`checkDeclaredEncoding`, `walk`).
    private static func checkEncodingForm(_ document: [UInt8], refusal: (String) -> BraidError) throws(BraidError) {
        let marks: [(bytes: [UInt8], name: String)] = [
            ([0x00, 0x00, 0xFE, 0xFF], "UTF-32"), ([0xFF, 0xFE, 0x00, 0x00], "UTF-32"),
            ([0xFE, 0xFF], "UTF-16"), ([0xFF, 0xFE], "UTF-16"),
        ]
        if let mark = marks.first(where: { document.starts(with: $0.bytes) }) {
            throw refusal("is \(mark.name), not UTF-8")
        }
        guard !document.contains(0) else { throw refusal("is not UTF-8 text (it has NUL bytes)") }
    }

    /// Refuses a document whose XML declaration names an encoding other than UTF-8 (`UTF-7`, `ISO-8859-1`, …),
    /// as libxml2 read the declaration: a document in another encoding could spell markup in bytes that no check
    /// of UTF-8 text would recognise. A document without a declaration is UTF-8 by XML's own rule.
    private static func checkDeclaredEncoding(
        _ reader: xmlTextReaderPtr, refusal: (String) -> BraidError
    ) throws(BraidError) {
        guard let declared = xmlTextReaderConstEncoding(reader).map({ String(cString: $0) }) else { return }
        guard declared.lowercased() == "utf-8" else {
            throw refusal("declares the encoding '\(PrintableText.sanitised(declared))'; Braid reads UTF-8 only")
        }
    }

    /// The first node settles the encoding libxml2 read the declaration as (`checkDeclaredEncoding`), and the end
    /// checks it again, for a libxml2 that records it only once the document is read. A document type declaration
    /// is refused as the node libxml2 parsed it into, whatever bytes spelt it: with no DTD there are no entities to
    /// expand (`XML_PARSE_NOENT` is never set, nor `XML_PARSE_DTDLOAD`), and a reference to an undeclared one is not
    /// well-formed.
    private static func walk(
        _ reader: xmlTextReaderPtr,
        refusal: (String) -> BraidError,
        _ visit: (Node) throws(BraidError) -> Void
    ) throws(BraidError) {
        var first = true
        while true {
            let status = xmlTextReaderRead(reader)
            guard status != 0 else { return try checkDeclaredEncoding(reader, refusal: refusal) }
            guard status == 1 else {
                throw refusal("is not well-formed XML (line \(xmlTextReaderGetParserLineNumber(reader)))")
            }
            if first {
                first = false
                try checkDeclaredEncoding(reader, refusal: refusal)
            }
            switch UInt32(bitPattern: xmlTextReaderNodeType(reader)) {
            case XML_READER_TYPE_DOCUMENT_TYPE.rawValue:
                throw refusal("declares a DTD (<!DOCTYPE>), which Braid refuses")
            case XML_READER_TYPE_ELEMENT.rawValue:
                let name = xmlTextReaderConstLocalName(reader).map { String(cString: $0) } ?? ""
                let namespace = xmlTextReaderConstNamespaceUri(reader).map { String(cString: $0) }
                try visit(
                    .start(name: name, namespace: namespace) { attribute in
                        guard let value = xmlTextReaderGetAttribute(reader, Array(attribute.utf8) + [0]) else {
                            return nil
                        }
                        defer { braid_xml_free(value) }
                        return String(cString: value)
                    })
                // `<url/>` has no end node of its own.
                if xmlTextReaderIsEmptyElement(reader) == 1 { try visit(.end) }
            case XML_READER_TYPE_END_ELEMENT.rawValue:
                try visit(.end)
            case XML_READER_TYPE_TEXT.rawValue, XML_READER_TYPE_CDATA.rawValue,
                XML_READER_TYPE_WHITESPACE.rawValue, XML_READER_TYPE_SIGNIFICANT_WHITESPACE.rawValue:
                guard let value = xmlTextReaderConstValue(reader) else { break }
                try visit(.text(String(cString: value)))
            default:
                break
            }
        }
    }
}
