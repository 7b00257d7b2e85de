import Testing

@testable import Braid

/// A cache peer's template names where it serves the origin's file; what it may contain is checked before any
/// traffic, and what it gives is what a cache configured as the manual says can fetch.
@Suite("CachePeer")
struct CachePeerTests {
    static let template = "http://cache-3:8080/{scheme}/{host}{path}"

    @Test("The placeholders take the origin URL's scheme, host (with its port) and path, with the query kept")
    func rendersTheOriginURL() throws {
        let peer = try CachePeer(template: Self.template)
        #expect(peer.url(for: "https://example.org/a/b.bin") == "http://cache-3:8080/https/example.org/a/b.bin")
        #expect(
            peer.url(for: "http://Example.ORG:8000/models/m%20v2.bin?X-Amz-Signature=abc&e=1#frag")
                == "http://cache-3:8080/http/example.org:8000/models/m%20v2.bin?X-Amz-Signature=abc&e=1")
        #expect(peer.url(for: "https://example.org") == "http://cache-3:8080/https/example.org/")
        #expect(peer.name == "http://cache-3:8080")
    }

    @Test("{path} may follow the port directly: a cache that proxies one origin at its root")
    func pathRightAfterThePort() throws {
        let peer = try CachePeer(template: "http://cache-3:6081{path}")
        #expect(peer.url(for: "https://example.org/a/b.bin?s=1") == "http://cache-3:6081/a/b.bin?s=1")
        #expect(peer.name == "http://cache-3:6081")
    }

    @Test("What identifies a file for hashing leaves the query out: differently signed URLs to it agree")
    func resourceIdentityDropsTheQuery() {
        #expect(
            CachePeer.resourceIdentity(of: "https://cdn.example/repos/ab/cd?X-Amz-Signature=1")
                == CachePeer.resourceIdentity(of: "https://cdn.example/repos/ab/cd?X-Amz-Signature=2"))
        #expect(CachePeer.resourceIdentity(of: "https://cdn.example:8443/x?y") == "https://cdn.example:8443/x")
    }

    @Test("A login in the template is the peer's own; messages name the peer without it")
    func loginInTheTemplate() throws {
        let peer = try CachePeer(template: "http://fleet:s3cret@cache-1:8080/{scheme}/{host}{path}")
        #expect(peer.name == "http://cache-1:8080")
        #expect(peer.base == "http://fleet:s3cret@cache-1:8080/")
    }

    @Test(
        "Templates that cannot name a peer's URL are refused before any traffic",
        arguments: [
            "http://cache:8080/{scheme}/{host}",  // no {path}
            "ftp://cache/{path}",
            "http://{host}/{path}",  // a placeholder in the host
            "http://cache:8080/{url}{path}",  // an unknown placeholder
            "cache:8080/{path}",
            "http://cache:8080/ {path}",
            "",
        ])
    func refusesBadTemplates(template: String) {
        #expect(throws: BraidError.self) { try CachePeer(template: template) }
    }

    @Test("A list is split on commas and white space; an empty one is no peers")
    func parsesLists() throws {
        let peers = try CachePeer.list(
            parsing: " http://a:1/{path},http://b:2/{scheme}/{host}{path}\n\thttp://c:3/x{path} ,")
        #expect(
            peers.map(\.template) == ["http://a:1/{path}", "http://b:2/{scheme}/{host}{path}", "http://c:3/x{path}"])
        #expect(try CachePeer.list(parsing: "").isEmpty)
        #expect(throws: BraidError.self) { try CachePeer.list(parsing: "http://a:1/{path},nope") }
    }

    @Test("A request to a peer carries none of the user's credentials, only the login of its own template")
    func peersGetNoCredentials() throws {
        var options = RequestOptions()
        options.headers = ["Authorization: Bearer secret"]
        options.cookieFilePath = "/tmp/jar"
        options.netrcPath = "/tmp/netrc"
        options.credentials = CredentialScope(userNamed: ["http://cache-1:8080/file", "https://user:pw@example.org/"])
        let peers = [try CachePeer(template: "http://fleet:pw@cache-1:8080/{path}")]
        let peerOptions = options.forCachePeers(peers)
        #expect(peerOptions.headers.isEmpty)
        #expect(peerOptions.cookieFilePath == nil)
        #expect(peerOptions.netrcPath == nil)
        #expect(!peerOptions.credentials.permits(.header, to: "https://example.org/file"))
        #expect(
            peerOptions.credentials.requestURL(for: "http://cache-1:8080/https/example.org/f")
                == "http://fleet:pw@cache-1:8080/https/example.org/f")
    }
}
