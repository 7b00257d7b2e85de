import Testing

@testable import Braid

@Suite("RemoteResource")
struct RemoteResourceTests {
    static func resource(etag: String?, lastModified: String? = "Sun, 06 Nov 1994 08:49:37 GMT") -> RemoteResource {
        RemoteResource(
            requestedURL: "http://h/f", resolvedURL: "http://h/f", length: 10, acceptsRanges: true, etag: etag,
            lastModified: lastModified, suggestedFilename: nil, digests: [])
    }

    @Test("If-Range is sent with a strong ETag only: never a weak one, never a date that may not be strong")
    func ifRangeNeedsAStrongETag() {
        #expect(Self.resource(etag: "\"abc\"").ifRangeValidator == "\"abc\"")
        #expect(Self.resource(etag: "W/\"abc\"").ifRangeValidator == nil)
        #expect(Self.resource(etag: nil).ifRangeValidator == nil)
    }

    @Test("ETags compare weakly: a weak tag that turned strong with the same opaque tag is the same file")
    func weakComparison() {
        let weak = Self.resource(etag: "W/\"abc\"")
        #expect(weak.sameRepresentation(etag: "\"abc\"", lastModified: nil))
        #expect(weak.sameRepresentation(etag: "W/\"abc\"", lastModified: nil))
        #expect(!weak.sameRepresentation(etag: "\"abd\"", lastModified: nil))
        let dated = Self.resource(etag: nil)
        #expect(dated.sameRepresentation(etag: nil, lastModified: "Sun, 06 Nov 1994 08:49:37 GMT"))
        #expect(!dated.sameRepresentation(etag: nil, lastModified: "Mon, 07 Nov 1994 08:49:37 GMT"))
    }
}
