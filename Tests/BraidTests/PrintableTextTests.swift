import Braid
import Testing

@Suite("text from servers and files, made safe to print")
struct PrintableTextTests {
    @Test(
        "Control characters and bidirectional overrides are shown as escapes",
        arguments: [
            ("\"abc\u{1B}]0;pwned\u{7}\"", "\"abc\\x1B]0;pwned\\x07\""),
            ("a\r\nb\tc", "a\\x0D\\x0Ab\\x09c"),
            ("\u{7F}\u{80}\u{9B}31m", "\\x7F\\x80\\x9B31m"),
            ("evil\u{202E}txt.exe", "evil\\u{202E}txt.exe"),
            ("\u{2066}x\u{2069}", "\\u{2066}x\\u{2069}"),
            ("plain ASCII, é and 日本 stay", "plain ASCII, é and 日本 stay"),
        ]
    )
    func escapes(raw: String, printed: String) {
        #expect(PrintableText.sanitised(raw) == printed)
    }

    @Test(
        "A URL's password is hidden wherever the URL appears in a message",
        arguments: [
            ("https://user:hunter2@example.org/f", "https://user:***@example.org/f"),
            ("dropping mirror http://a:b@h:8080/x?q=1: gone", "dropping mirror http://a:***@h:8080/x?q=1: gone"),
            ("'ftp://u:p@w@host' and http://x:y@z", "'ftp://u:***@host' and http://x:***@z"),
            (
                "http://user@example.org/ keeps a name without password",
                "http://user@example.org/ keeps a name without password"
            ),
            ("http://example.org/a@b:c", "http://example.org/a@b:c"),
            ("no URL here: a:b@c", "no URL here: a:b@c"),
        ]
    )
    func hidesPasswords(raw: String, printed: String) {
        #expect(PrintableText.sanitised(raw) == printed)
    }

    @Test(
        "A URL in a log line hides its password and the values of its signing and secret query parameters",
        arguments: [
            (
                "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F1&X-Amz-Date=1"
                    + "&X-Amz-Expires=60&X-Amz-Security-Token=tok&X-Amz-SignedHeaders=host&X-Amz-Signature=abc1",
                "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Date=1"
                    + "&X-Amz-Expires=60&X-Amz-Security-Token=***&X-Amz-SignedHeaders=***&X-Amz-Signature=***"
            ),
            (
                "https://a.blob.core.windows.net/c/f?sv=2024&se=2030&sp=r&sig=c2ln%3D",
                "https://a.blob.core.windows.net/c/f?sv=2024&se=2030&sp=r&sig=***"
            ),
            ("http://u:p@h/f?expires=9&signature=ff#frag", "http://u:***@h/f?expires=9&signature=***#frag"),
            ("http://h/f?access_token=t&key&page=2", "http://h/f?access_token=***&key&page=2"),
            ("http://h/f?q=1&x=2", "http://h/f?q=1&x=2"),
            ("http://h/f", "http://h/f"),
        ]
    )
    func hidesSignedQueries(raw: String, printed: String) {
        #expect(PrintableText.sanitised(url: raw) == printed)
    }

    @Test("An error's message is always printable")
    func errorMessages() {
        let error = BraidError(.protocolViolation, "the server said \u{1B}[2J at https://u:secret@h/")
        #expect(error.message == "the server said \\x1B[2J at https://u:***@h/")
    }
}
