import Testing

@testable import Braid

/// The userinfo of a URL's authority, found on its text: dropped wherever it stands, and nothing else of the URL
/// touched, an `@` of its path, query or fragment included.
@Suite("URLUserinfo")
struct URLUserinfoTests {
    @Test(
        "the authority's userinfo is dropped, and only it",
        arguments: [
            ("http://user:secret@example.com/f.bin", "http://example.com/f.bin"),
            ("https://user@example.com", "https://example.com"),
            ("http://a@b:c@example.com:8080/x?y", "http://example.com:8080/x?y"),
            ("http://example.com/a@b", "http://example.com/a@b"),
            ("http://example.com?who=a@b", "http://example.com?who=a@b"),
            ("http://example.com#a@b", "http://example.com#a@b"),
            ("http://üser:pässword@hôst.example/ä@ö", "http://hôst.example/ä@ö"),
            ("example.com/user@host", "example.com/user@host"),
            ("mailto:someone@example.com", "mailto:someone@example.com"),
            ("http:/user@example.com/", "http:/user@example.com/"),
            ("s3://key:secret@bucket/prefix/", "s3://bucket/prefix/"),
            ("http://@example.com/", "http://example.com/"),
            ("", ""),
        ])
    func removed(url: String, expected: String) {
        #expect(URLUserinfo.removed(from: url) == expected)
    }

    @Test("the range is the userinfo with its @, in the authority after the first ://")
    func range() throws {
        let url = "x://u:p@h/next://v@w"
        let range = try #require(URLUserinfo.range(in: url[...]))
        #expect(url[range] == "u:p@")
        #expect(URLUserinfo.range(in: "x://y://user@host/p"[...]) == nil, "the first authority is 'y:'")
    }
}
