/// What the probe learnt about the file on the server.
public struct RemoteResource: Sendable, Equatable {
    /// The URL as given.
    public var requestedURL: String
    /// The URL after redirects; segments are fetched from here.
    public var resolvedURL: String
    /// The length in bytes, when the server said.
    public var length: Int64?
    /// Whether the server serves byte ranges (answered a range request with 206).
    public var acceptsRanges: Bool
    public var etag: String?
    public var lastModified: String?
    /// A safe file name from `Content-Disposition`, when the server proposed one.
    public var suggestedFilename: String?
    /// Every well-formed digest of the whole file the server sent.
    public var digests: [ExpectedDigest]
    /// The media type the server labelled it with (`Content-Type`), such as `application/metalink4+xml` for a
    /// Metalink document a program may want to read rather than keep.
    public var contentType: String? = nil

    /// The longest file Braid downloads: 2^53 bytes (8 PiB). Every byte count below it is exact as a `Double` (for
    /// progress and rates), and its plan and manifest stay small. A server claiming more is refused.
    public static let maximumLength: Int64 = 1 << 53

    /// Refuses a length the server claims that Braid cannot store.
    static func checkLength(_ length: Int64?) throws(BraidError) {
        guard let length, length > maximumLength else { return }
        throw .protocolViolation(
            "the server reports a length of \(length) bytes, more than Braid can download (at most 2^53 bytes, 8 PiB)"
        )
    }

    /// Whether the download can be split into ranges and resumed.
    public var isSegmentable: Bool { acceptsRanges && length != nil }

    /// The validator for `If-Range`: a strong ETag only. A date is a strong validator only when the file is at
    /// least a second older than the response (RFC 9110 §13.1.5), and servers such as Apache answer every range
    /// with the whole file when it is not; without a strong ETag, Braid sends no `If-Range` and checks the
    /// validators each 206 carries against the probe instead.
    var ifRangeValidator: String? {
        guard let etag, !etag.hasPrefix("W/") else { return nil }
        return etag
    }

    /// Whether a response's validators say it is still the same file.
    func sameRepresentation(etag otherETag: String?, lastModified otherLastModified: String?) -> Bool {
        // The weak comparison of RFC 9110 §8.8.3.2: a file Apache modified less than a second ago has a weak
        // ETag that turns strong later, with the same opaque tag.
        if let etag, let otherETag { return Self.opaqueTag(etag) == Self.opaqueTag(otherETag) }
        if let lastModified, let otherLastModified { return lastModified == otherLastModified }
        return true
    }

    private static func opaqueTag(_ etag: String) -> Substring {
        etag.hasPrefix("W/") ? etag.dropFirst(2) : Substring(etag)
    }
}
