extension TestServer {
    /// One `<file>` of a Metalink v4 document describing a content this server (or another) serves.
    public struct MetalinkFile: Sendable, Hashable {
        /// The `name` attribute: where a client saves it, `/` for subdirectories.
        public var name: String
        public var content: TestContent
        /// The `<url>`s, the first with priority 1, the next 2, and so on.
        public var urls: [String]
        /// The length of each `<pieces>` piece; nil lists no piece hashes.
        public var pieceLength: UInt64?

        public init(name: String, content: TestContent, urls: [String], pieceLength: UInt64? = nil) {
            self.name = name
            self.content = content
            self.urls = urls
            self.pieceLength = pieceLength
        }
    }

    /// A Metalink v4 (RFC 5854) document for `files`: each with its size, whole-file SHA-256, SHA-256 piece hashes
    /// when it has a piece length, and its URLs by priority, as a mirror network's redirector publishes them.
    public static func metalinkDocument(_ files: [MetalinkFile]) -> Document {
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <metalink xmlns="urn:ietf:params:xml:ns:metalink">
              <generator>braid-test-server</generator>

            """
        for file in files {
            xml += "  <file name=\"\(escaped(file.name))\">\n"
            xml += "    <size>\(file.content.size)</size>\n"
            xml += "    <hash type=\"sha-256\">\(file.content.hexDigest(.sha256))</hash>\n"
            if let pieceLength = file.pieceLength {
                xml += "    <pieces length=\"\(pieceLength)\" type=\"sha-256\">\n"
                for start in stride(from: 0, to: file.content.size, by: Int(pieceLength)) {
                    let piece = start..<min(start + pieceLength, file.content.size)
                    xml += "      <hash>\(TestContent.hex(file.content.digest(.sha256, of: piece)))</hash>\n"
                }
                xml += "    </pieces>\n"
            }
            for (index, url) in file.urls.enumerated() {
                xml += "    <url priority=\"\(index + 1)\">\(escaped(url))</url>\n"
            }
            xml += "  </file>\n"
        }
        xml += "</metalink>\n"
        return Document(bytes: Array(xml.utf8), contentType: "application/metalink4+xml")
    }

    /// `text` with the characters XML reserves replaced by their entities.
    private static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
