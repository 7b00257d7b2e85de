import Testing

@testable import Braid

/// Header lines as libcurl delivers them, one call per line, for every response of a redirect chain.
@Suite("ResponseHeaders")
struct ResponseHeadersTests {
    func headers(_ lines: [String]) -> ResponseHeaders {
        var headers = ResponseHeaders()
        for line in lines { headers.consume(line: line + "\r\n") }
        return headers
    }

    @Test("A fresh value has no status and no fields")
    func empty() {
        let headers = ResponseHeaders()
        #expect(headers.status == 0)
        #expect(headers["content-length"] == nil)
        #expect(headers.contentLength == nil)
    }

    @Test("A head is open from its status line to its blank line, and again for the next response's")
    func headOpen() {
        var headers = ResponseHeaders()
        #expect(!headers.isHeadOpen)
        for (line, open) in [
            ("HTTP/1.1 302 Found", true), ("Location: /x", true), ("", false), ("HTTP/1.1 200 OK", true),
            ("Content-Length: 5", true), ("", false),
        ] {
            let bytes = Array((line + "\r\n").utf8)
            bytes.withUnsafeBytes { headers.consume(bytes: $0) }
            #expect(headers.isHeadOpen == open, "after '\(line)'")
        }
        #expect(headers.status == 200 && headers.contentLength == 5)
    }

    @Test(
        "The status line gives the status code, in every HTTP version",
        arguments: [
            ("HTTP/1.1 200 OK", 200),
            ("HTTP/1.0 206 Partial Content", 206),
            ("HTTP/2 404", 404),
            ("HTTP/3 503 ", 503),
            ("HTTP/1.1 abc Nope", 0),
            ("HTTP/1.1", 0),
        ]
    )
    func statusLine(line: String, status: Int) {
        #expect(headers([line]).status == status)
    }

    @Test("Field names are case-insensitive and values are trimmed")
    func caseInsensitiveNames() {
        let headers = headers(["HTTP/1.1 200 OK", "Content-Length:   1234  ", "ETAG: \"abc\"", "x-empty:"])
        #expect(headers["content-length"] == "1234")
        #expect(headers["CONTENT-LENGTH"] == "1234")
        #expect(headers["Content-Length"] == "1234")
        #expect(headers["etag"] == "\"abc\"")
        #expect(headers["X-Empty"] == "")
        #expect(headers.contentLength == 1234)
    }

    @Test(
        "Content-Length is one length: the same value repeated is that value, anything else is a problem said once",
        arguments: [
            (["Content-Length: 4096"], 4096, false),
            (["Content-Length: 0"], 0, false),
            (["Content-Length: 4096", "Content-Length: 4096"], 4096, false),
            (["Content-Length: 4096,4096"], 4096, false),
            (["Content-Length: 4096", "Content-Length: 4097"], nil, true),
            (["Content-Length: -1"], nil, true),
            (["Content-Length: +5"], nil, true),
            (["Content-Length: 99999999999999999999999"], nil, true),
            (["Content-Length: 12abc"], nil, true),
            (["Content-Length: "], nil, true),
            (["Content-Length: 5,"], nil, true),
            ([], nil, false),
        ] as [([String], Int64?, Bool)]
    )
    func contentLength(lines: [String], length: Int64?, problem: Bool) {
        let headers = headers(["HTTP/1.1 200 OK"] + lines)
        #expect(headers.contentLength == length)
        #expect((headers.contentLengthProblem != nil) == problem, "\(headers.contentLengthProblem ?? "")")
    }

    @Test("A value keeps every colon after the first")
    func colonsInValue() {
        let headers = headers(["HTTP/1.1 302 Found", "Location: http://example.com:8080/a:b"])
        #expect(headers["location"] == "http://example.com:8080/a:b")
    }

    @Test("Repeated fields are joined with a comma, in arrival order")
    func repeatedFieldsJoin() {
        let headers = headers([
            "HTTP/1.1 200 OK", "Digest: md5=AAA", "Accept-Ranges: bytes", "digest: sha-256=BBB", "DIGEST: x=y",
        ])
        #expect(headers["digest"] == "md5=AAA, sha-256=BBB, x=y")
        #expect(headers["accept-ranges"] == "bytes")
    }

    @Test("A new status line starts a new response: only the last one of a redirect chain counts")
    func statusLineResetsFields() {
        var headers = ResponseHeaders()
        headers.consume(line: "HTTP/1.1 301 Moved Permanently\r\n")
        headers.consume(line: "Location: /next\r\n")
        headers.consume(line: "Content-Length: 99\r\n")
        headers.consume(line: "\r\n")
        #expect(headers.status == 301)
        #expect(headers.contentLength == 99)

        headers.consume(line: "HTTP/1.1 100 Continue\r\n")
        headers.consume(line: "\r\n")
        #expect(headers.status == 100)
        #expect(headers["location"] == nil)
        #expect(headers.contentLength == nil)

        headers.consume(line: "HTTP/1.1 200 OK\r\n")
        headers.consume(line: "Content-Length: 5\r\n")
        headers.consume(line: "\r\n")
        #expect(headers.status == 200)
        #expect(headers.contentLength == 5)
        #expect(headers["location"] == nil)
    }

    @Test("Lines without a colon are ignored")
    func linesWithoutColon() {
        let headers = headers(["HTTP/1.1 200 OK", "garbage line", "", "Content-Length: 7"])
        #expect(headers.status == 200)
        #expect(headers.contentLength == 7)
        #expect(headers["garbage line"] == nil)
    }

    @Test(
        "Content-Length is a non-negative integer or nothing",
        arguments: [
            ("0", 0), ("10737418243", 10_737_418_243), ("-1", nil), ("12abc", nil), ("", nil),
            ("99999999999999999999", nil),
        ] as [(String, Int64?)]
    )
    func contentLength(value: String, expected: Int64?) {
        #expect(headers(["HTTP/1.1 200 OK", "Content-Length: \(value)"]).contentLength == expected)
    }
}

/// `trimmingWhitespace` trims ASCII ends byte by byte and falls back to Unicode's whitespace for the rest: both
/// paths must agree with the definition.
@Suite("Trimming whitespace")
struct TrimmingWhitespaceTests {
    @Test(
        "Whitespace at either end goes, ASCII or not; whitespace inside and other characters stay",
        arguments: [
            ("", ""), ("   ", ""), ("\r\n", ""), ("abc", "abc"), (" \t abc \r\n", "abc"), ("a b", "a b"),
            ("\u{A0}abc\u{2003}", "abc"), (" \u{85}abc", "abc"), ("abc \u{3000}\r\n", "abc"),
            ("\u{A0}", ""), (" é ", "é"), (" \u{301}a ", "\u{301}a"), ("x\u{301} ", "x\u{301}"),
            ("\u{200B}abc", "\u{200B}abc"),
        ]
    )
    func trims(text: String, trimmed: String) {
        #expect(text.trimmingWhitespace() == trimmed)
        #expect(Substring(text).trimmingWhitespace() == trimmed)
    }
}
