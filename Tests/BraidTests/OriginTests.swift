import Testing

@testable import Braid

@Suite("origins")
struct OriginTests {
    @Test(
        "URLs of one origin: default ports, case, userinfo, path and query do not matter",
        arguments: [
            ("http://example.org/a", "http://EXAMPLE.org:80/b?q=1"),
            ("https://example.org/", "https://user:pw@example.org:443/x"),
            ("http://127.0.0.1:8080/f", "HTTP://127.0.0.1:8080/g"),
            ("http://[::1]:9/f", "http://[::1]:9/other"),
        ]
    )
    func sameOrigin(first: String, second: String) throws {
        #expect(try #require(Origin(url: first)) == (try #require(Origin(url: second))))
    }

    @Test(
        "Another scheme, host or port is another origin",
        arguments: [
            ("https://example.org/", "http://example.org/"),
            ("http://example.org/", "http://example.org:8080/"),
            ("http://127.0.0.1:8080/", "http://localhost:8080/"),
            ("http://example.org/", "http://example.org.evil.test/"),
        ]
    )
    func otherOrigin(first: String, second: String) throws {
        #expect(try #require(Origin(url: first)) != (try #require(Origin(url: second))))
    }

    @Test(
        "A URL without a parsable host has no origin", arguments: ["", "not a url", "http://", "example.org/no-scheme"])
    func unparsable(url: String) {
        #expect(Origin(url: url) == nil)
    }
}
