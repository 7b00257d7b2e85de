/// Reads what S3 answers a ListObjectsV2 request with (`XMLPullReader`): a `<ListBucketResult>` page of objects,
/// or an `<Error>` saying why not.
///
/// Of a page, only what a download needs is read: `<IsTruncated>`, `<NextContinuationToken>`, `<EncodingType>`, and
/// of each `<Contents>` its `<Key>`, `<Size>`, `<ETag>`, `<LastModified>` and `<ChecksumAlgorithm>`s. The root and
/// its children are recognised in S3's namespace or in none (some S3-compatible stores send none); everything else
/// (`<CommonPrefixes>`, `<Owner>`, other namespaces) is skipped with its content.
struct ObjectListingParser {
    /// One page of a listing.
    struct Page: Equatable {
        var objects: [ObjectStore.Object] = []
        /// Whether more objects follow, to be asked for with `continuationToken`.
        var isTruncated = false
        var continuationToken: String?
    }

    /// What an `<Error>` document says.
    struct ServiceError: Equatable {
        /// S3's error code: `NoSuchBucket`, `AccessDenied`, `SignatureDoesNotMatch`, …
        var code: String
        var message: String
        /// The region the request should have been signed for or sent to, when the error says (`<Region>`).
        var region: String?
    }

    /// S3's namespace for its documents.
    static let namespace = "http://s3.amazonaws.com/doc/2006-03-01/"
    /// The most objects one page may list: S3 sends at most 1,000.
    static let maximumObjectsPerPage = 10_000
    /// The longest text of one element: a key is at most 1,024 bytes, percent-encoded three times that.
    private static let maximumTextBytes = 16 << 10

    private let source: String
    /// The open elements, by local name; one outside S3's namespace (or none) is pushed as nil, so that neither it
    /// nor anything inside it matches.
    private var open: [String?] = []
    private var root: String?
    private var page = Page()
    private var encodingType: String?
    private var object: ObjectStore.Object?
    private var error = ServiceError(code: "", message: "")
    private var text = XMLPullReader.ElementText(maximumBytes: Self.maximumTextBytes)

    private init(source: String) {
        self.source = source
    }

    /// The page `document` is; refused when it is not a well-formed `<ListBucketResult>` whose values make sense.
    ///
    /// - Parameter source: names the listing in messages: "the listing of s3://bucket/prefix/".
    static func page(_ document: [UInt8], source: String) throws(BraidError) -> Page {
        let parser = try read(document, source: source)
        guard parser.root == "ListBucketResult" else {
            throw refusal(source, "is not a ListBucketResult (its root element is <\(parser.root ?? "")>)")
        }
        var page = parser.page
        if page.isTruncated && (page.continuationToken ?? "").isEmpty {
            throw refusal(source, "says more objects follow but gives no continuation token")
        }
        guard let encoding = parser.encodingType else { return page }
        guard encoding == "url" else { throw refusal(source, "encodes its keys as '\(encoding)', not 'url'") }
        for index in page.objects.indices {
            guard let key = Self.formDecoded(page.objects[index].key) else {
                throw refusal(source, "lists a key that is not percent-encoded UTF-8: '\(page.objects[index].key)'")
            }
            page.objects[index].key = key
        }
        return page
    }

    /// The error an `<Error>` document describes; nil when `document` is not one (an HTML page, nothing).
    static func serviceError(_ document: [UInt8]) -> ServiceError? {
        guard let parser = try? read(document, source: "the error"), parser.root == "Error",
            !parser.error.code.isEmpty
        else { return nil }
        return parser.error
    }

    private static func read(_ document: [UInt8], source: String) throws(BraidError) -> ObjectListingParser {
        var parser = ObjectListingParser(source: source)
        try XMLPullReader.read(document, refusal: { refusal(source, $0) }) { node throws(BraidError) in
            switch node {
            case let .start(name, namespace, _): try parser.startElement(name, namespace: namespace)
            case .end: try parser.endElement()
            case let .text(value): try parser.characters(value)
            }
        }
        return parser
    }

    static func refusal(_ source: String, _ reason: String) -> BraidError {
        .protocolViolation("\(source) \(reason)")
    }

    // MARK: - Nodes

    private mutating func startElement(_ name: String, namespace: String?) throws(BraidError) {
        let known = namespace == nil || namespace == Self.namespace
        if root == nil { root = known ? name : "{\(namespace ?? "")}\(name)" }
        let read = known && open.last != .some(nil) && open.count < 3
        open.append(read ? name : nil)
        text.stop()
        guard read else { return }
        let isPage = root == "ListBucketResult"
        switch open.count {
        case 2 where isPage && name == "Contents":
            guard page.objects.count < Self.maximumObjectsPerPage else {
                throw Self.refusal(source, "lists more than \(Self.maximumObjectsPerPage) objects in one page")
            }
            object = ObjectStore.Object(key: "", size: -1)
        case 2:
            text.start()
        case 3 where isPage && open[1] == "Contents":
            text.start()
        default:
            break
        }
    }

    private mutating func characters(_ string: String) throws(BraidError) {
        guard text.append(string) else {
            throw Self.refusal(source, "has an element whose text is longer than \(Self.maximumTextBytes >> 10) KiB")
        }
    }

    private mutating func endElement() throws(BraidError) {
        let name = open.popLast() ?? nil
        let value = text.take() ?? ""
        guard let name else { return }
        switch (open.count + 1, root) {
        case (2, "ListBucketResult"): try endPageElement(name, value)
        case (3, "ListBucketResult"): try endObjectElement(name, value)
        case (2, "Error"): endErrorElement(name, value)
        default: break
        }
    }

    private mutating func endPageElement(_ name: String, _ value: String) throws(BraidError) {
        switch name {
        case "Contents":
            guard let done = object else { return }
            object = nil
            guard !done.key.isEmpty else { throw Self.refusal(source, "lists an object without a <Key>") }
            guard done.size >= 0 else { throw Self.refusal(source, "lists \(done.key) without its <Size>") }
            page.objects.append(done)
        case "IsTruncated":
            switch value.trimmingWhitespace() {
            case "true": page.isTruncated = true
            case "false": page.isTruncated = false
            default: throw Self.refusal(source, "has an <IsTruncated> that is neither true nor false")
            }
        case "NextContinuationToken":
            page.continuationToken = value.trimmingWhitespace()
        case "EncodingType":
            encodingType = value.trimmingWhitespace()
        default:
            break
        }
    }

    private mutating func endObjectElement(_ name: String, _ value: String) throws(BraidError) {
        guard object != nil else { return }
        switch name {
        // A key is taken exactly as sent: blanks at its ends are part of it.
        case "Key": object?.key = value
        case "Size":
            let digits = value.trimmingWhitespace()
            guard (1...18).contains(digits.utf8.count), digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let size = Int64(digits), size <= RemoteResource.maximumLength
            else { throw Self.refusal(source, "gives a <Size> that is not a number of bytes up to 2^53: '\(value)'") }
            object?.size = size
        case "ETag": object?.entityTag = value.trimmingWhitespace()
        case "LastModified": object?.lastModified = value.trimmingWhitespace()
        case "ChecksumAlgorithm": object?.checksumAlgorithms.append(value.trimmingWhitespace())
        default: break
        }
    }

    private mutating func endErrorElement(_ name: String, _ value: String) {
        let value = String(value.trimmingWhitespace().prefix(Self.maximumMessageLength))
        switch name {
        case "Code": error.code = value
        case "Message": error.message = value
        case "Region": error.region = value
        default: break
        }
    }

    /// The longest error message quoted: S3's are a sentence or two.
    private static let maximumMessageLength = 300

    /// A key as S3 sends it with `encoding-type=url`: `%XX` escapes of UTF-8 bytes, and `+` for a space (as
    /// botocore decodes it); nil when the escapes are malformed or the bytes are not UTF-8.
    static func formDecoded(_ text: String) -> String? {
        ContentDisposition.percentDecodedBytes(text, plusAsSpace: true).flatMap {
            String(validating: $0, as: UTF8.self)
        }
    }
}
