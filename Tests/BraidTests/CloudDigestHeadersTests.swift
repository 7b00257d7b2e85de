import Foundation
import Testing

@testable import Braid

/// The digests object stores send without being asked: GCS `x-goog-hash`, S3 full-object `x-amz-checksum-*`,
/// and the `ETag` of an S3 single-part upload. Composite checksums and malformed values are ignored.
@Suite("DigestHeaders from cloud stores")
struct CloudDigestHeadersTests {
    /// The digests of "abc", the FIPS test vectors.
    static let md5 = DigestHeadersTests.md5
    static let sha1 = ExpectedDigest.decodeHex("a9993e364706816aba3e25717850c26c9cd0d89d")!
    static let sha256 = DigestHeadersTests.sha256
    static let md5Base64 = Data(md5).base64EncodedString()
    static let sha1Base64 = Data(sha1).base64EncodedString()
    static let sha256Base64 = Data(sha256).base64EncodedString()

    func digests(_ lines: [String], partial: Bool = false) -> [ExpectedDigest] {
        var headers = ResponseHeaders()
        headers.consume(line: partial ? "HTTP/1.1 206 Partial Content" : "HTTP/1.1 200 OK")
        for line in lines { headers.consume(line: line) }
        return DigestHeaders.digests(in: headers, isPartialResponse: partial)
    }

    // MARK: - x-goog-hash

    @Test("x-goog-hash: the md5 member is kept, crc32c is not checked")
    func googHash() {
        let found = digests(["x-goog-hash: crc32c=n03x6A==, md5=\(Self.md5Base64)"])
        #expect(found == [ExpectedDigest(algorithm: .md5, bytes: Self.md5, source: .googHash)])
    }

    @Test("x-goog-hash sent as two fields, as GCS does, and on a range response")
    func googHashRepeated() {
        let found = digests(["x-goog-hash: crc32c=n03x6A==", "X-Goog-Hash: md5=\(Self.md5Base64)"], partial: true)
        #expect(found == [ExpectedDigest(algorithm: .md5, bytes: Self.md5, source: .googHash)])
    }

    @Test(
        "x-goog-hash without a usable md5 (a composite object, bad base64, wrong length) gives nothing",
        arguments: ["crc32c=n03x6A==", "md5=not base64!", "md5=AAAA", "md5", "sha256=\(sha256Base64)"])
    func googHashWithoutMD5(value: String) {
        #expect(digests(["x-goog-hash: \(value)"]).isEmpty)
    }

    // MARK: - x-amz-checksum

    @Test("x-amz-checksum-sha256 and -sha1 of a full object are kept; SHA-256 is preferred")
    func amazonChecksums() {
        let found = digests([
            "x-amz-checksum-sha1: \(Self.sha1Base64)", "x-amz-checksum-sha256: \(Self.sha256Base64)",
            "x-amz-checksum-type: FULL_OBJECT",
        ])
        #expect(
            found == [
                ExpectedDigest(algorithm: .sha1, bytes: Self.sha1, source: .amzChecksumSHA1),
                ExpectedDigest(algorithm: .sha256, bytes: Self.sha256, source: .amzChecksumSHA256),
            ])
        #expect(DigestHeaders.preferred(found)?.source == .amzChecksumSHA256)
    }

    @Test("x-amz-checksum without x-amz-checksum-type is taken as a full-object checksum")
    func amazonChecksumWithoutType() {
        let found = digests(["x-amz-checksum-sha256: \(Self.sha256Base64)"])
        #expect(found.map(\.source) == [.amzChecksumSHA256])
    }

    @Test(
        "A composite S3 checksum (a checksum of part checksums) is ignored",
        arguments: [
            ["x-amz-checksum-sha256: \(sha256Base64)-3"],
            ["x-amz-checksum-sha256: \(sha256Base64)-3", "x-amz-checksum-type: COMPOSITE"],
            ["x-amz-checksum-sha256: \(sha256Base64)", "x-amz-checksum-type: COMPOSITE"],
            ["x-amz-checksum-sha1: \(sha1Base64)", "x-amz-checksum-type: composite"],
            // A multipart upload's SHA checksum is a composite even when it is not marked as one (as moto sends it).
            ["x-amz-checksum-sha256: \(sha256Base64)", "ETag: \"\(ExpectedDigest.encodeHex(md5))-2\""],
        ])
    func compositeAmazonChecksum(lines: [String]) {
        #expect(digests(lines).isEmpty)
    }

    @Test(
        "A malformed x-amz-checksum is ignored",
        arguments: ["", "not base64!", "AAAA", sha1Base64, "\(sha256Base64)AA=="])
    func malformedAmazonChecksum(value: String) {
        #expect(digests(["x-amz-checksum-sha256: \(value)"]).isEmpty)
    }

    // MARK: - S3 ETag

    static let md5Tag = "\"\(ExpectedDigest.encodeHex(md5))\""

    @Test(
        "An S3 single-part ETag is the object's MD5",
        arguments: [
            ["Server: AmazonS3"], ["x-amz-request-id: 4442587FB7D0A2F9"],
            ["Server: AmazonS3", "x-amz-server-side-encryption: AES256"], ["x-amz-id-2: YWJj"],
            ["x-amzn-requestid: abc"],
        ])
    func amazonEntityTag(identity: [String]) {
        let found = digests(identity + ["ETag: \(Self.md5Tag)"])
        #expect(found == [ExpectedDigest(algorithm: .md5, bytes: Self.md5, source: .entityTag)])
    }

    @Test(
        "An ETag is not a digest from a server that is not S3, of a multipart upload, weak, or under KMS or SSE-C",
        arguments: [
            ["ETag: \(md5Tag)"],
            ["Server: nginx", "ETag: \(md5Tag)"],
            ["Server: AmazonS3", "ETag: \"\(ExpectedDigest.encodeHex(md5))-2\""],
            ["Server: AmazonS3", "ETag: W/\(md5Tag)"],
            ["Server: AmazonS3", "ETag: \(ExpectedDigest.encodeHex(md5))"],
            ["Server: AmazonS3", "ETag: \"\(ExpectedDigest.encodeHex(sha1))\""],
            ["Server: AmazonS3", "ETag: \"zz\(ExpectedDigest.encodeHex(md5).dropFirst(2))\""],
            ["Server: AmazonS3", "x-amz-server-side-encryption: aws:kms", "ETag: \(md5Tag)"],
            ["Server: AmazonS3", "x-amz-server-side-encryption-customer-algorithm: AES256", "ETag: \(md5Tag)"],
        ])
    func notAnAmazonEntityTag(lines: [String]) {
        #expect(digests(lines).isEmpty)
    }

    @Test("Content-MD5 wins over an S3 ETag of the same strength, and SHA-256 over both")
    func preference() {
        let md5Only = digests(["Server: AmazonS3", "ETag: \(Self.md5Tag)", "Content-MD5: \(Self.md5Base64)"])
        #expect(DigestHeaders.preferred(md5Only)?.source == .contentMD5)
        let withSHA = digests([
            "Server: AmazonS3", "ETag: \(Self.md5Tag)", "x-amz-checksum-sha256: \(Self.sha256Base64)",
        ])
        #expect(DigestHeaders.preferred(withSHA)?.source == .amzChecksumSHA256)
    }
}
