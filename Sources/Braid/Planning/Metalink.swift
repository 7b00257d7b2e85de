import SystemPackage

/// A Metalink v4 document (RFC 5854): the files it describes, each with its size, whole-file and piece digests, and
/// the URLs (mirrors) that serve it. Metalink is how openSUSE, Fedora and many mirror networks publish downloads.
///
/// It is read with a real XML parser and treated as hostile: the document is capped at 8 MiB, a DTD or entity
/// declaration is refused (no entity expansion, no external entities), counts are capped, and every name, number
/// and digest is checked before anything is downloaded. ``File/download(options:preferringLocations:)`` turns a file into
/// what a `Download` takes.
public struct Metalink: Sendable, Equatable {
    /// One `<file>`: what to save, what it must match, and where it can be fetched.
    public struct File: Sendable, Equatable {
        /// The relative path to save it under: one or more `/`-separated components, none of them empty, `.` or
        /// `..` (RFC 5854 §4.1.2.1).
        public var name: String
        /// The length in bytes, when the document gives it.
        public var size: Int64?
        /// Every whole-file digest of a known algorithm (md5, sha-1, sha-256, sha-512), in document order.
        public var hashes: [ExpectedDigest]
        /// The digests of its pieces, when the document lists them in an algorithm Braid knows.
        public var pieces: PieceHashes?
        /// Where it is served, the most preferred first (by priority, then document order): http, https and ftp
        /// URLs only.
        public var urls: [Mirror]

        public init(
            name: String, size: Int64? = nil, hashes: [ExpectedDigest] = [], pieces: PieceHashes? = nil,
            urls: [Mirror] = []
        ) {
            self.name = name
            self.size = size
            self.hashes = hashes
            self.pieces = pieces
            self.urls = urls
        }
    }

    /// One `<url>` of a file.
    public struct Mirror: Sendable, Equatable {
        public var url: String
        /// 1 is the most preferred; a URL without one gets ``defaultPriority``.
        public var priority: Int
        /// The ISO 3166-1 alpha-2 country code the server is in, lower-cased, when the document says.
        public var location: String?

        public init(url: String, priority: Int = Metalink.defaultPriority, location: String? = nil) {
            self.url = url
            self.priority = priority
            self.location = location
        }
    }

    /// The files, in document order; never empty.
    public var files: [File]

    public init(files: [File]) {
        self.files = files
    }

    /// The Metalink v4 XML namespace.
    public static let namespace = "urn:ietf:params:xml:ns:metalink"
    /// The priority of a `<url>` that gives none: the least preferred (RFC 5854 §4.2.16.2).
    public static let defaultPriority = 999_999
    /// The media type a server sends a Metalink v4 document with.
    public static let mediaType = "application/metalink4+xml"

    /// The largest document read: real ones with piece hashes of a multi-gigabyte image are a few hundred KiB, and
    /// libxml2 refuses a document of 10 MB or more unless told to allow huge ones, which Braid does not.
    public static let maximumDocumentSize = 8 << 20
    /// The most `<file>` elements in one document.
    static let maximumFiles = 10_000
    /// The most `<url>` elements of one file.
    static let maximumURLs = 1_000
    /// The most piece hashes of one file: more than an 8 MiB document of SHA-256 pieces can hold.
    static let maximumPieces = 1 << 20

    /// Parses a document; `source` (a path or URL) names it in error messages. A document that is not Metalink v4,
    /// or that is malformed or unsafe, is a usage error whose `option` is `.metalink`.
    public init(parsing document: [UInt8], source: String) throws(BraidError) {
        guard document.count <= Self.maximumDocumentSize else {
            throw Self.refusal(source, "is larger than 8 MiB")
        }
        self = try MetalinkParser.parse(document, source: source)
    }

    /// Reads and parses the document at `path`, reading no more than one byte past the size limit (a path may
    /// name a device or a pipe that never ends).
    public init(readingAt path: String) throws(BraidError) {
        var document: [UInt8] = []
        do {
            let file = try FileDescriptor.open(FilePath(path), .readOnly, options: .closeOnExec)
            defer { try? file.close() }
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while document.count <= Self.maximumDocumentSize {
                let count = try buffer.withUnsafeMutableBytes { try file.read(into: $0) }
                if count == 0 { break }
                document += buffer[..<count]
            }
        } catch {
            throw .usage("cannot read the Metalink file \(path): \(error)", option: .metalink)
        }
        try self.init(parsing: document, source: path)
    }

    /// Whether a response's `Content-Type` says its body is a Metalink v4 document.
    public static func isMetalink(contentType: String?) -> Bool {
        guard let contentType else { return false }
        // A media type holds no blanks: removing them all trims the ones around it.
        let mediaType = contentType.lowercased().split(separator: ";", omittingEmptySubsequences: false)[0]
        return mediaType.filter { $0 != " " && $0 != "\t" } == Self.mediaType
    }

    static func refusal(_ source: String, _ problem: String) -> BraidError {
        .usage("the Metalink \(source) \(problem)", option: .metalink)
    }
}
