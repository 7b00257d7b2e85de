import SystemPackage
import Testing

@testable import Braid

/// How `-N` judges the server's file against the local copy when the server answered with the file (not 304).
@Suite("LocalCopy")
struct LocalCopyTests {
    /// A local copy dated `Sun, 09 Sep 2001 01:46:40 GMT`, of 100 bytes.
    static let copy = LocalCopy(path: FilePath("/tmp/f"), modified: 1_000_000_000, size: 100)

    static func resource(lastModified: String?, length: Int64?) -> RemoteResource {
        RemoteResource(
            requestedURL: "http://example.org/f", resolvedURL: "http://example.org/f", length: length,
            acceptsRanges: true, etag: nil, lastModified: lastModified, suggestedFilename: nil, digests: [])
    }

    @Test(
        "Not newer and the same length is up to date; newer, another length or no date is fetched",
        arguments: [
            ("Sun, 09 Sep 2001 01:46:40 GMT", 100, LocalCopy.Freshness.upToDate),
            ("Sun, 09 Sep 2001 01:46:39 GMT", 100, .upToDate),
            ("Sun, 09 Sep 2001 01:46:40 GMT", nil, .upToDate),
            ("Sun, 09 Sep 2001 01:46:41 GMT", 100, .serverNewer),
            ("Sun, 09 Sep 2001 01:46:40 GMT", 101, .sizeDiffers),
            ("yesterday", 100, .undated),
            (nil, 100, .undated),
        ] as [(String?, Int64?, LocalCopy.Freshness)]
    )
    func freshness(lastModified: String?, length: Int64?, expected: LocalCopy.Freshness) {
        let resource = Self.resource(lastModified: lastModified, length: length)
        #expect(Self.copy.freshness(of: resource, wallClock: 1_700_000_000) == expected)
    }

    @Test("The condition is the modification time as an IMF-fixdate")
    func conditionalHeaders() {
        #expect(Self.copy.conditionalHeaders == ["If-Modified-Since: Sun, 09 Sep 2001 01:46:40 GMT"])
    }
}
