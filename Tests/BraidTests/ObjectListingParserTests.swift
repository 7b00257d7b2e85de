import Testing

@testable import Braid

/// ListObjectsV2 answers as S3 and moto write them, page after page, and every way a hostile one is refused.
@Suite("S3 listing parser")
struct ObjectListingParserTests {
    static func page(_ text: String) throws(BraidError) -> ObjectListingParser.Page {
        try ObjectListingParser.page(Array(text.utf8), source: "the listing of s3://b/p/")
    }

    static func refusal(_ text: String) -> String? {
        do {
            _ = try page(text)
            return nil
        } catch {
            return error.message
        }
    }

    /// The first page of two, as S3 sends it with `encoding-type=url`: keys percent-encoded, a space as `+`.
    static let firstPage = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
          <Name>b</Name><Prefix>p%2F</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>
          <EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>
          <ContinuationToken>ignored</ContinuationToken>
          <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
          <Contents>
            <Key>p/a+b%2Bc.txt</Key><LastModified>2024-05-01T12:00:00.000Z</LastModified>
            <ETag>&quot;9dd4e461268c8034f5c8564e155c67a6&quot;</ETag>
            <ChecksumAlgorithm>SHA256</ChecksumAlgorithm><ChecksumType>FULL_OBJECT</ChecksumType>
            <Size>1</Size><StorageClass>STANDARD</StorageClass>
            <Owner><ID>x</ID><Key>not a key</Key></Owner>
          </Contents>
          <Contents>
            <Key>p/dir/%E2%80%AEevil%01.txt</Key><ETag>"3858f62230ac3c915f300c664312c11f-2"</ETag><Size>10485760</Size>
          </Contents>
          <CommonPrefixes><Prefix>p/dir/</Prefix></CommonPrefixes>
        </ListBucketResult>
        """

    @Test("A page gives each object's key (decoded), size, ETag and checksum algorithms, and the next token")
    func firstPageOfTwo() throws {
        let page = try Self.page(Self.firstPage)

        #expect(page.isTruncated)
        #expect(page.continuationToken == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
        #expect(page.objects.map(\.key) == ["p/a b+c.txt", "p/dir/\u{202E}evil\u{01}.txt"])
        #expect(page.objects.map(\.size) == [1, 10_485_760])
        #expect(page.objects[0].entityTag == "\"9dd4e461268c8034f5c8564e155c67a6\"")
        #expect(page.objects[0].lastModified == "2024-05-01T12:00:00.000Z")
        #expect(page.objects[0].checksumAlgorithms == ["SHA256"])
        #expect(!page.objects[0].isMultipartUpload)
        #expect(page.objects[1].isMultipartUpload)
    }

    @Test("The last page has no token; keys without encoding-type are taken as written, blanks included")
    func lastPage() throws {
        let page = try Self.page(
            """
            <ListBucketResult><IsTruncated>false</IsTruncated>\
            <Contents><Key> p/x%20 </Key><Size>0</Size></Contents></ListBucketResult>
            """)

        #expect(!page.isTruncated && page.continuationToken == nil)
        #expect(page.objects.map(\.key) == [" p/x%20 "])
    }

    @Test("An error document gives S3's code, message and region; anything else gives none")
    func serviceError() {
        let error = ObjectListingParser.serviceError(
            Array(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <Error><Code>AuthorizationHeaderMalformed</Code><Message>the region 'us-east-1' is wrong; \
                expecting 'eu-west-1'</Message><Region>eu-west-1</Region><RequestId>1</RequestId></Error>
                """.utf8))
        #expect(error?.code == "AuthorizationHeaderMalformed")
        #expect(error?.message == "the region 'us-east-1' is wrong; expecting 'eu-west-1'")
        #expect(error?.region == "eu-west-1")
        #expect(ObjectListingParser.serviceError(Array("<html><body>500</body></html>".utf8)) == nil)
        #expect(ObjectListingParser.serviceError([]) == nil)
        #expect(ObjectListingParser.serviceError(Array("<Error><Code>".utf8)) == nil)
    }

    @Test(
        "A DTD is refused as libxml2 parsed it: no entity expanded, no file or URL read",
        arguments: [
            """
            <?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>
            <ListBucketResult><Contents><Key>&b;</Key><Size>1</Size></Contents></ListBucketResult>
            """,
            """
            <?xml version="1.0"?><!DOCTYPE l [<!ENTITY x SYSTEM "file:///etc/passwd">]>
            <ListBucketResult><Contents><Key>&x;</Key><Size>1</Size></Contents></ListBucketResult>
            """,
            "<!DOCTYPE ListBucketResult SYSTEM \"http://127.0.0.1:9/s3.dtd\"><ListBucketResult/>",
        ])
    func documentTypeRefused(document: String) {
        #expect(Self.refusal(document)?.contains("declares a DTD") == true, "\(Self.refusal(document) ?? "accepted")")
    }

    @Test("A hostile or broken page is refused with a sentence naming the listing")
    func hostilePages() {
        let cases: [(String, String)] = [
            ("", "is empty"),
            ("<ListBucketResult><IsTruncated>true</IsTruncated>", "is not well-formed XML"),
            ("<ListBucketResult>&undeclared;</ListBucketResult>", "is not well-formed XML"),
            ("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>", "gives no continuation token"),
            ("<ListBucketResult><IsTruncated>maybe</IsTruncated></ListBucketResult>", "neither true nor false"),
            ("<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>", "without a <Key>"),
            ("<ListBucketResult><Contents><Key>k</Key></Contents></ListBucketResult>", "without its <Size>"),
            ("<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents></ListBucketResult>", "<Size>"),
            (
                "<ListBucketResult><Contents><Key>k</Key><Size>99999999999999999</Size></Contents></ListBucketResult>",
                "up to 2^53"
            ),
            (
                "<ListBucketResult><EncodingType>url</EncodingType><Contents><Key>%ZZ</Key><Size>1</Size></Contents>"
                    + "</ListBucketResult>",
                "not percent-encoded UTF-8"
            ),
            (
                "<ListBucketResult><EncodingType>url</EncodingType><Contents><Key>%FF</Key><Size>1</Size></Contents>"
                    + "</ListBucketResult>",
                "not percent-encoded UTF-8"
            ),
            ("<ListBucketResult><EncodingType>base64</EncodingType></ListBucketResult>", "not 'url'"),
            ("<Error><Code>AccessDenied</Code></Error>", "is not a ListBucketResult (its root element is <Error>)"),
            ("<x:ListBucketResult xmlns:x=\"urn:other\"/>", "is not a ListBucketResult"),
            (
                "<ListBucketResult><Contents><Key>\(String(repeating: "k", count: 20_000))</Key></Contents>"
                    + "</ListBucketResult>",
                "longer than 16 KiB"
            ),
        ]
        for (document, reason) in cases {
            let refusal = Self.refusal(document)
            #expect(refusal?.hasPrefix("the listing of s3://b/p/ ") == true, "\(document.prefix(80))")
            #expect(refusal?.contains(reason) == true, "\(document.prefix(80)): \(refusal ?? "accepted")")
        }
    }

    @Test("A page in UTF-16 is refused, as every XML document Braid reads")
    func utf16Refused() {
        let bytes: [UInt8] = [0xFF, 0xFE] + Array("<ListBucketResult/>".utf16).flatMap { [UInt8($0 & 0xFF), 0] }
        #expect(throws: BraidError.self) { try ObjectListingParser.page(bytes, source: "the listing") }
    }

    @Test("A key made with form encoding decodes as botocore decodes it")
    func formDecoding() {
        #expect(ObjectListingParser.formDecoded("a+b%2Bc%2F%C3%A9") == "a b+c/é")
        #expect(ObjectListingParser.formDecoded("%") == nil)
        #expect(ObjectListingParser.formDecoded("%4") == nil)
        #expect(ObjectListingParser.formDecoded("%C3") == nil)
    }
}
