import Testing

@testable import Braid

/// The one rule for every credential: the origins the user named receive them, nothing else does.
@Suite("credential scope")
struct CredentialScopeTests {
    static let scope = CredentialScope(userNamed: [
        "https://alice:s%3Acret@example.org/file", "http://mirror.example.net:8080/file",
    ])

    @Test(
        "Every kind of credential goes to an origin the user named, whatever the path",
        arguments: CredentialScope.Credential.allCases)
    func namedOrigins(credential: CredentialScope.Credential) {
        #expect(Self.scope.permits(credential, to: "https://example.org:443/other?x=1"))
        #expect(Self.scope.permits(credential, to: "HTTPS://EXAMPLE.ORG/file"))
        #expect(Self.scope.permits(credential, to: "http://mirror.example.net:8080/elsewhere"))
    }

    @Test(
        "Every kind fails closed anywhere else: scheme, port, host, unparsable, or no URL named at all",
        arguments: CredentialScope.Credential.allCases)
    func otherOrigins(credential: CredentialScope.Credential) {
        for url in [
            "http://example.org/file", "https://example.org:8443/file", "https://cdn.example.org/file",
            "https://example.org.evil.test/file", "http://mirror.example.net/file", "https://exa mple.org/",
        ] {
            #expect(!Self.scope.permits(credential, to: url), "\(url)")
        }
        #expect(!CredentialScope(userNamed: []).permits(credential, to: "https://example.org/"))
        #expect(!CredentialScope(userNamed: ["not a url"]).permits(credential, to: "https://example.org/"))
    }

    @Test("A request carries the userinfo the user wrote for its origin, as written, and no other")
    func requestURL() {
        let scope = Self.scope
        #expect(
            scope.requestURL(for: "https://alice:s%3Acret@example.org/file")
                == "https://alice:s%3Acret@example.org/file")
        // libcurl writes percent-escapes in lower case when it rebuilds a URL: the same login.
        #expect(
            scope.requestURL(for: "https://example.org/next").lowercased() == "https://alice:s%3acret@example.org/next")
        #expect(
            scope.requestURL(for: "https://mallory:x@example.org/next").lowercased()
                == "https://alice:s%3acret@example.org/next")
        #expect(scope.requestURL(for: "https://cdn.example.org/f") == "https://cdn.example.org/f", "another origin")
        #expect(scope.requestURL(for: "https://mallory:x@cdn.example.org/f") == "https://cdn.example.org/f")
        #expect(scope.requestURL(for: "http://mirror.example.net:8080/f") == "http://mirror.example.net:8080/f")
        #expect(scope.requestURL(for: "http://bob@mirror.example.net:8080/f") == "http://mirror.example.net:8080/f")
        #expect(scope.requestURL(for: "http://example.org/file") == "http://example.org/file", "a downgrade")
    }

    @Test("Of two URLs naming one origin, the first with a userinfo gives its login")
    func firstLogin() {
        let scope = CredentialScope(userNamed: [
            "https://example.org/a", "https://bob@example.org/b", "https://carol:pw@example.org/c",
        ])
        #expect(scope.requestURL(for: "https://example.org/x") == "https://bob@example.org/x")
    }

    @Test("A URL the user named is granted as any other URL of its origin: the login found after it too")
    func namedURLs() {
        let urls = ["https://example.org/a", "https://bob@example.org/b", "https://mallory@cdn.example.org/c"]
        let scope = CredentialScope(userNamed: urls)
        // A login written on a later URL of the same origin counts for an earlier one too.
        #expect(scope.requestURL(for: "https://example.org/a") == "https://bob@example.org/a")
        #expect(scope.requestURL(for: "https://bob@example.org/b") == "https://bob@example.org/b")
        #expect(scope.requestURL(for: "https://mallory@cdn.example.org/c") == "https://mallory@cdn.example.org/c")
        for url in urls { #expect(scope.permits(.header, to: url), "\(url)") }
        // Scopes compare by what they permit, not by the URLs that named it.
        #expect(scope == CredentialScope(userNamed: ["https://bob@example.org/", "https://mallory@cdn.example.org/"]))
        #expect(scope != CredentialScope(userNamed: ["https://example.org/a", "https://mallory@cdn.example.org/c"]))
    }

    @Test("A URL's origin is the one its own parse gives, whether or not it is the first URL the scope was made of")
    func origins() {
        let scope = CredentialScope(userNamed: ["HTTPS://Bob@Example.ORG/a", "http://mirror.example.net:8080/b"])
        for url in ["HTTPS://Bob@Example.ORG/a", "http://mirror.example.net:8080/b", "https://cdn.example.org/c"] {
            #expect(scope.origin(of: url) == Origin(url: url), "\(url)")
        }
        #expect(scope.origin(of: "HTTPS://Bob@Example.ORG/a")?.description == "https://example.org:443")
        #expect(CredentialScope(userNamed: ["not a url"]).origin(of: "not a url") == nil)
        #expect(CredentialScope(userNamed: []).origin(of: "https://example.org/")?.host == "example.org")
    }
}
