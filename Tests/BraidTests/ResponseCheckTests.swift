import Testing

@testable import Braid

/// The verdict on a response head, as a pure function: nil accepts it. Requests are for `100..<200` of a file
/// the probe found to be 300 bytes with ETag `"v1"`, unless a test says otherwise.
@Suite("ResponseCheck")
struct ResponseCheckTests {
    static let resource = TransferMachineTests.origin

    static func head(_ lines: [String]) -> ResponseHeaders {
        var headers = ResponseHeaders()
        for line in lines { headers.consume(line: line + "\r\n") }
        return headers
    }

    static func verdict(
        _ lines: [String],
        request: Range<Int64> = 100..<200,
        resource: RemoteResource = resource,
        ranged: Bool = true
    ) -> ResponseCheck.Verdict? {
        let headers = head(lines)
        return ResponseCheck.verdict(
            status: headers.status, headers: headers, request: request, resource: resource, ranged: ranged,
            wallClock: 0)
    }

    static func violation(_ message: String) -> ResponseCheck.Verdict {
        .failure(.transient(.protocolViolation, message, retryAfter: nil, refusedConnection: false))
    }

    // MARK: - 206 Partial Content

    @Test("A 206 with fewer bytes than asked, from where asked, is taken, and says where its bytes end")
    func cappedPartialContent() {
        let lines = ["HTTP/1.1 206 Partial Content", "Content-Range: bytes 100-149/300", "Content-Length: 50"]
        #expect(Self.verdict(lines) == nil)
        #expect(ResponseCheck.servedEnd(headers: Self.head(lines), request: 100..<200) == 150)
        #expect(
            ResponseCheck.servedEnd(
                headers: Self.head(["HTTP/1.1 206 Partial Content", "Content-Range: bytes 100-199/300"]),
                request: 100..<200) == nil)
        // Not from where asked, of another length, or a Content-Length that is not its range's: refused as before.
        #expect(Self.verdict(["HTTP/1.1 206 Partial Content", "Content-Range: bytes 120-149/300"]) != nil)
        #expect(Self.verdict(["HTTP/1.1 206 Partial Content", "Content-Range: bytes 100-149/301"]) != nil)
        #expect(
            Self.verdict(["HTTP/1.1 206 Partial Content", "Content-Range: bytes 100-149/300", "Content-Length: 100"])
                == Self.violation("the server's Content-Length 100 does not match its Content-Range"))
    }

    @Test("A response whose Content-Length is not one length fails at once, not after waiting for its end")
    func invalidContentLength() {
        let problem = ResponseCheck.Verdict.failure(
            .fatal(.protocolViolation, "the server's Content-Length '100, 300' is not one length"))
        #expect(
            Self.verdict([
                "HTTP/1.1 206 Partial Content", "Content-Range: bytes 100-199/300", "Content-Length: 100",
                "Content-Length: 300",
            ]) == problem)
        #expect(Self.verdict(["HTTP/1.1 200 OK", "Content-Length: 100", "Content-Length: 300"]) == problem)
        #expect(Self.verdict(["HTTP/1.1 404 Not Found", "Content-Length: -1"]) != problem)
    }

    @Test("A 206 with exactly the range and total length asked for is accepted")
    func exactPartialContent() {
        #expect(
            Self.verdict([
                "HTTP/1.1 206 Partial Content", "Content-Range: bytes 100-199/300", "Content-Length: 100",
            ]) == nil
        )
        #expect(
            Self.verdict(["HTTP/1.1 206 Partial Content", "Content-Range: bytes 100-199/300"]) == nil,
            "Content-Length is optional"
        )
    }

    @Test(
        "A 206 without a valid Content-Range is a protocol violation",
        arguments: [
            [] as [String], ["Content-Range: 100-199/300"], ["Content-Range: bytes 199-100/300"],
            ["Content-Range: bytes 100-199/150"],
        ]
    )
    func partialContentWithoutValidRange(fields: [String]) {
        #expect(
            Self.verdict(["HTTP/1.1 206 Partial Content"] + fields)
                == Self.violation("the server's 206 response has no valid Content-Range")
        )
    }

    @Test(
        "A 206 for another range than asked is a protocol violation, whatever total it announces",
        arguments: ["bytes 101-149/300", "bytes 0-99/300", "bytes 100-200/300", "bytes 100-149/400", "bytes */300"]
    )
    func partialContentForAnotherRange(contentRange: String) {
        #expect(
            Self.verdict(["HTTP/1.1 206 Partial Content", "Content-Range: \(contentRange)"])
                == Self.violation("the server answered bytes 100-199/300 with Content-Range '\(contentRange)'")
        )
    }

    @Test("A 206 for the range asked but another total length disagrees with the probe")
    func partialContentWithAnotherLength() {
        #expect(
            Self.verdict(["HTTP/1.1 206 Partial Content", "Content-Range: bytes 100-199/400"])
                == .lengthDisagrees("the server's Content-Range says the file is 400 bytes, its HEAD said 300")
        )
    }

    @Test("A 206 with an unknown total length is a protocol violation: the file could be another")
    func partialContentWithUnknownLength() {
        #expect(
            Self.verdict(["HTTP/1.1 206 Partial Content", "Content-Range: bytes 100-199/*"])
                == Self.violation("the server answered bytes 100-199/300 with Content-Range 'bytes 100-199/*'")
        )
    }

    @Test("A 206 whose Content-Length differs from its Content-Range is a protocol violation")
    func partialContentLengthMismatch() {
        #expect(
            Self.verdict([
                "HTTP/1.1 206 Partial Content", "Content-Range: bytes 100-199/300", "Content-Length: 50",
            ]) == Self.violation("the server's Content-Length 50 does not match its Content-Range")
        )
    }

    @Test("A 206 to a request without a Range header is an unexpected status")
    func partialContentUnasked() {
        #expect(
            Self.verdict(
                ["HTTP/1.1 206 Partial Content", "Content-Range: bytes 0-299/300"], request: 0..<300, ranged: false)
                == Self.violation("the server answered with unexpected status 206")
        )
    }

    // MARK: - 200 OK

    @Test("A 200 from the same file to a range request means the server ignores ranges")
    func okToRangeRequest() {
        #expect(Self.verdict(["HTTP/1.1 200 OK", "Content-Length: 300", "ETag: \"v1\""]) == .rangesIgnored)
        #expect(Self.verdict(["HTTP/1.1 200 OK"]) == .rangesIgnored, "nothing says it is another file")
    }

    @Test("A 200 to a whole-body request is accepted when it is the same file")
    func okToWholeBodyRequest() {
        #expect(
            Self.verdict(
                ["HTTP/1.1 200 OK", "Content-Length: 300", "ETag: \"v1\""], request: 0..<300, ranged: false) == nil)
        var unknown = Self.resource
        unknown.length = nil
        #expect(
            Self.verdict(
                ["HTTP/1.1 200 OK", "Content-Length: 12345"], request: 0..<300, resource: unknown,
                ranged: false) == nil,
            "a file of unknown length takes any length"
        )
    }

    @Test(
        "A 200 with another validator or length means the file on the server changed",
        arguments: [
            (["ETag: \"v2\""], true), (["ETag: \"v2\""], false), (["Content-Length: 301"], true),
            (["Content-Length: 299", "ETag: \"v1\""], false),
        ]
    )
    func okFromAnotherFile(fields: [String], ranged: Bool) {
        #expect(
            Self.verdict(["HTTP/1.1 200 OK"] + fields, request: 0..<300, ranged: ranged)
                == .remoteChanged("the file on the server changed since the download started")
        )
    }

    @Test("Without an ETag on either side, Last-Modified tells whether the file changed")
    func lastModifiedDecides() {
        var resource = Self.resource
        resource.etag = nil
        resource.lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"
        let same = ["HTTP/1.1 200 OK", "Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT"]
        let later = ["HTTP/1.1 200 OK", "Last-Modified: Mon, 07 Nov 1994 08:49:37 GMT"]
        #expect(Self.verdict(same, request: 0..<300, resource: resource, ranged: false) == nil)
        #expect(
            Self.verdict(later, request: 0..<300, resource: resource, ranged: false)
                == .remoteChanged("the file on the server changed since the download started")
        )
    }

    @Test("A mirror's response is judged against the mirror's own validators")
    func mirrorOwnValidators() {
        var mirror = Self.resource
        mirror.requestedURL = "https://mirror.example.net/file.iso"
        mirror.resolvedURL = mirror.requestedURL
        mirror.etag = "\"m1\""
        let fromMirror = ["HTTP/1.1 200 OK", "Content-Length: 300", "ETag: \"m1\""]
        #expect(Self.verdict(fromMirror, request: 0..<300, resource: mirror, ranged: false) == nil)
        #expect(
            Self.verdict(fromMirror, request: 0..<300, resource: Self.resource, ranged: false)
                == .remoteChanged("the file on the server changed since the download started")
        )
    }

    // MARK: - Other statuses

    @Test("A 416 means the file changed: the range asked for is no longer in it")
    func rangeNotSatisfiable() {
        #expect(
            Self.verdict(["HTTP/1.1 416 Range Not Satisfiable", "Content-Range: bytes */250"])
                == .remoteChanged("the server can no longer serve the range (HTTP 416): the file changed")
        )
    }

    @Test("A redirect is a protocol violation: only the probe follows redirects", arguments: [301, 302, 303, 307, 308])
    func redirect(status: Int) {
        #expect(
            Self.verdict(["HTTP/1.1 \(status) Moved", "Location: https://elsewhere.example/file.iso"])
                == Self.violation(
                    "the server redirected a range request (HTTP \(status)) instead of answering it")
        )
    }

    @Test("Another 2xx status is a protocol violation", arguments: [201, 202, 204])
    func unexpectedSuccess(status: Int) {
        #expect(
            Self.verdict(["HTTP/1.1 \(status) Whatever"])
                == Self.violation("the server answered with unexpected status \(status)")
        )
    }

    @Test("A busy server is retried, after its Retry-After, with fewer connections")
    func busyServer() {
        #expect(
            Self.verdict(["HTTP/1.1 503 Service Unavailable", "Retry-After: 7"])
                == .failure(
                    .transient(
                        .protocolViolation, "the server answered 503 (busy)", retryAfter: 7, refusedConnection: true))
        )
        #expect(
            Self.verdict(["HTTP/1.1 429 Too Many Requests"])
                == .failure(
                    .transient(
                        .protocolViolation, "the server answered 429 (busy)", retryAfter: nil, refusedConnection: true)
                )
        )
    }

    @Test("A server error is retried; a refusal or a missing file is not")
    func errorStatuses() {
        #expect(
            Self.verdict(["HTTP/1.1 500 Internal Server Error"])
                == .failure(
                    .transient(.protocolViolation, "the server answered 500", retryAfter: nil, refusedConnection: false)
                )
        )
        #expect(
            Self.verdict(["HTTP/1.1 403 Forbidden"])
                == .failure(.fatal(.protocolViolation, "the server refused access (HTTP 403)"))
        )
        #expect(
            Self.verdict(["HTTP/1.1 404 Not Found"])
                == .failure(.fatal(.protocolViolation, "the server has no such file (HTTP 404)"))
        )
    }

    @Test("Only the last response's head counts: an interim 100 Continue is forgotten")
    func lastResponseCounts() {
        #expect(
            Self.verdict([
                "HTTP/1.1 100 Continue", "Content-Range: bytes 0-0/1", "HTTP/1.1 206 Partial Content",
                "Content-Range: bytes 100-199/300",
            ]) == nil
        )
    }
}
