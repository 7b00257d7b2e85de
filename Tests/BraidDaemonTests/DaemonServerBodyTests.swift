import NIOCore
import NIOHTTP1
import Testing

@testable import BraidDaemon

/// `RequestBody` and `HTTPReply`: the limit on request bodies and the responses' headers, without a socket.
@Suite("DaemonServer bodies and replies")
struct DaemonServerBodyTests {
    @Test("A declared length over the limit is refused before reading; none declared is read and counted")
    func declaredLength() {
        #expect(RequestBody.admits(declaredLength: 10, limit: 10))
        #expect(!RequestBody.admits(declaredLength: 11, limit: 10))
        #expect(RequestBody.admits(declaredLength: nil, limit: 10))
    }

    @Test("Chunks are kept up to the limit exactly; the chunk that passes it is refused")
    func chunksAgainstLimit() {
        var body = RequestBody(limit: 10, declaredLength: nil)
        #expect(body.append(ByteBuffer(string: "hello")) == .withinLimit)
        #expect(body.append(ByteBuffer(string: "world")) == .withinLimit)
        #expect(body.bytes == Array("helloworld".utf8))
        #expect(body.append(ByteBuffer(string: "!")) == .tooLarge)
        #expect(body.bytes == Array("helloworld".utf8))
    }

    @Test("204 carries no Content-Length; other replies do, and say when the connection closes")
    func framingHeaders() throws {
        let noContent = HTTPReply.rpc(nil).parts(version: .http1_1, keepAlive: true)
        guard case .head(let head) = noContent.first else { Issue.record("no head"); return }
        #expect(head.status == .noContent)
        #expect(head.headers["content-length"].isEmpty)
        #expect(head.headers["access-control-allow-origin"] == ["*"])

        let tooLarge = HTTPReply.payloadTooLarge(limit: 1).parts(version: .http1_1, keepAlive: true)
        guard case .head(let refused) = tooLarge.first else { Issue.record("no head"); return }
        #expect(refused.headers["connection"] == ["close"])
        #expect(refused.headers["content-length"] == [String(HTTPReply.payloadTooLarge(limit: 1).body.count)])

        let legacy = HTTPReply.notFound().parts(version: .http1_0, keepAlive: true)
        guard case .head(let kept) = legacy.first else { Issue.record("no head"); return }
        #expect(kept.headers["connection"] == ["keep-alive"])
    }

    @Test("The page's policy forbids everything but its inline code and the daemon's own socket")
    func contentSecurityPolicy() {
        let policy = HTTPReply.contentSecurityPolicy
        #expect(policy.hasPrefix("default-src 'none'"))
        #expect(policy.contains("script-src 'unsafe-inline'"))
        #expect(policy.contains("connect-src 'self' ws: wss:"))
        #expect(policy.contains("frame-ancestors 'none'"))
    }
}

extension DaemonServerBodyTests {
    @Test("An enormous configured limit counts as 1 GiB, and a declared length alone reserves at most 1 MiB")
    func ceilings() {
        #expect(!RequestBody.admits(declaredLength: Int.max, limit: Int.max))
        let body = RequestBody(limit: Int.max, declaredLength: Int.max)
        #expect(body.limit == RequestBody.ceiling)
        #expect(body.collected.capacity <= RequestBody.reservation)
    }
}
