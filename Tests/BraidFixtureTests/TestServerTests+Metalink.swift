import BraidTestServer
import Foundation
import Testing

extension TestServerTests {
    @Test("A document route serves its bytes with its Content-Type, and HEAD its length alone")
    func documentRoute() async throws {
        let document = TestServer.Document(bytes: Array("<x/>\n".utf8), contentType: "application/metalink4+xml")
        server.setRoute("/doc", TestServer.Route(document: document))

        let get = try await CurlRun(["-D", "-", "-o", file(), server.url("/doc")])
        #expect(get.status == 200)
        #expect(get.header("Content-Type") == "application/metalink4+xml")
        #expect(try bytes(at: file()) == document.bytes)
        let head = try await CurlRun(["-I", server.url("/doc")])
        #expect(head.status == 200 && head.header("Content-Length") == "5")
        #expect(settledLog().map(\.bodyBytesSent) == [5, 0])
    }

    @Test("A Metalink document names the size, the SHA-256 of the whole content and of each piece, and the URLs")
    func metalinkDocument() async throws {
        let file = TestServer.MetalinkFile(
            name: "dir/f.bin", content: content, urls: ["http://a/f", "http://b/f?x=1&y=2"], pieceLength: 40_000)
        let text = String(decoding: TestServer.metalinkDocument([file]).bytes, as: UTF8.self)

        #expect(text.contains("<file name=\"dir/f.bin\">"))
        #expect(text.contains("<size>100003</size>"))
        #expect(text.contains("<hash type=\"sha-256\">\(content.hexDigest(.sha256))</hash>"))
        #expect(text.contains("<pieces length=\"40000\" type=\"sha-256\">"))
        let pieces = text.components(separatedBy: "      <hash>").dropFirst().map { $0.prefix(64) }
        let expected = [0..<40_000, 40_000..<80_000, 80_000..<100_003].map { range in
            content.digest(.sha256, of: range).map { String(format: "%02x", $0) }.joined()
        }
        #expect(pieces.map(String.init) == expected)
        #expect(content.digest(.sha256, of: 0..<content.size) == content.digest(.sha256))
        #expect(text.contains("<url priority=\"2\">http://b/f?x=1&amp;y=2</url>"))
    }
}
