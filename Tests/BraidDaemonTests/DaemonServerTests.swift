import BraidDaemon
import BraidTestSupport
import Foundation
import NIOCore
import NIOWebSocket
import Testing

/// The daemon's server seen from real clients on loopback: `curl` for HTTP, NIO's WebSocket client upgrader for
/// WebSockets, and a raw TCP client for what neither will send.
@Suite("DaemonServer")
struct DaemonServerTests {
    private static let request = #"{"jsonrpc":"2.0","method":"aria2.getVersion","id":"1","params":[]}"#

    // MARK: - HTTP

    @Test("POST /jsonrpc hands the body to the endpoint and returns its answer as JSON-RPC, readable from any origin")
    func postRoundTrip() async throws {
        try await ServerFixture.with { fixture in
            let response = try await CurlResponse.fetch(["--data-binary", Self.request, fixture.url("/jsonrpc")])
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/json-rpc")
            #expect(response.headers["access-control-allow-origin"] == "*")
            #expect(response.body == #"{"jsonrpc":"2.0","result":"# + Self.request + "}")
            #expect(fixture.endpoint.received == [Self.request])
        }
    }

    @Test("A request the endpoint answers with nothing gets 204 No Content")
    func postNotificationGets204() async throws {
        try await ServerFixture.with { fixture in
            let notification = #"{"jsonrpc":"2.0","method":"aria2.pause","params":["gid"]}"#
            let response = try await CurlResponse.fetch(["--data-binary", notification, fixture.url("/jsonrpc")])
            #expect(response.status == 204)
            #expect(response.body.isEmpty)
            #expect(fixture.endpoint.received == [notification])
        }
    }

    @Test("Keep-alive: two requests from one curl run travel on one connection, answered in order")
    func keepAlive() async throws {
        try await ServerFixture.with { fixture in
            let first = #"{"jsonrpc":"2.0","method":"first","id":1}"#
            let second = #"{"jsonrpc":"2.0","method":"second","id":2}"#
            let url = fixture.url("/jsonrpc")
            let result = try await ChildProcess.run(
                "curl", ["-sS", "-i", "-v", "--data-binary", first, url, "--next", "-i", "--data-binary", second, url]
            )
            let responses = CurlResponse.parseAll(result.standardOutput)
            #expect(responses.map(\.status) == [200, 200])
            #expect(responses.map(\.body) == [first, second].map { #"{"jsonrpc":"2.0","result":"# + $0 + "}" })
            #expect(result.standardError.contains("Re-using existing connection"))
        }
    }

    @Test("A large body sent with Expect: 100-continue gets 100 Continue at once, then its answer")
    func largeBodyWithExpectContinue() async throws {
        try await ServerFixture.with { fixture in
            let padding = String(repeating: "x", count: 64 * 1024)
            let request = #"{"jsonrpc":"2.0","method":"aria2.addTorrent","id":"t","params":[""# + padding + #""]}"#
            let response = try await CurlResponse.fetch([
                "-H", "Expect: 100-continue", "--data-binary", request, fixture.url("/jsonrpc"),
            ])
            #expect(response.status == 200)
            #expect(fixture.endpoint.received == [request])
            // curl waits a whole second for 100 Continue before sending anyway; the server must not make it wait.
            #expect(response.trace.contains("< HTTP/1.1 100 Continue"))
        }
    }

    /// How a body over the limit arrives: with a declared length, or chunked with nothing declared, or declared and
    /// held back until the server says 100 Continue (which it never does here).
    enum Framing: String, CaseIterable {
        case contentLength
        case chunked
        case expectContinue
    }

    @Test(
        "A body over maximumBodyBytes gets 413 and a closed connection, and the server goes on serving",
        arguments: Framing.allCases)
    func bodyOverLimit(framing: Framing) async throws {
        try await ServerFixture.with(maximumBodyBytes: 1024) { fixture in
            let oversized = String(repeating: "y", count: 4096)
            var arguments = ["--data-binary", oversized, fixture.url("/jsonrpc")]
            switch framing {
            case .contentLength: break
            case .chunked: arguments = ["-H", "Transfer-Encoding: chunked"] + arguments
            case .expectContinue: arguments = ["-H", "Expect: 100-continue"] + arguments
            }
            let refused = try await CurlResponse.fetch(arguments)
            #expect(refused.status == 413)
            #expect(refused.headers["connection"] == "close")
            #expect(refused.trace.contains("Closing connection") || refused.trace.contains("closing connection"))
            #expect(fixture.endpoint.received.isEmpty)

            let accepted = try await CurlResponse.fetch(["--data-binary", Self.request, fixture.url("/jsonrpc")])
            #expect(accepted.status == 200)
            #expect(fixture.endpoint.received == [Self.request])
        }
    }

    @Test("aria2's GET form becomes the JSON-RPC request a POST would carry, with id as a string")
    func getForm() async throws {
        try await ServerFixture.with { fixture in
            let params = Data(#"["token:s3cret",["http://example.com/a b"]]"#.utf8).base64EncodedString()
            let query = "method=aria2.addUri&id=QXJpYU5n&params=" + Self.urlEncoded(params)
            let response = try await CurlResponse.fetch([fixture.url("/jsonrpc?" + query)])
            let expected =
                #"{"jsonrpc":"2.0","method":"aria2.addUri","id":"QXJpYU5n","#
                + #""params":["token:s3cret",["http://example.com/a b"]]}"#
            #expect(response.status == 200)
            #expect(response.headers["access-control-allow-origin"] == "*")
            #expect(fixture.endpoint.received == [expected])
            #expect(response.body == #"{"jsonrpc":"2.0","result":"# + expected + "}")
        }
    }

    @Test("The GET form's jsoncallback wraps the answer as JSONP (given only with a secret)")
    func getFormJSONP() async throws {
        try await ServerFixture.with(admitsOtherOrigins: true) { fixture in
            let response = try await CurlResponse.fetch([
                fixture.url("/jsonrpc?method=system.listMethods&id=7&jsoncallback=cb_1")
            ])
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "text/javascript")
            #expect(response.body.hasPrefix("cb_1({") && response.body.hasSuffix("})"))
        }
    }

    @Test("A GET form that cannot be a request gets 400 with a JSON-RPC error and never reaches the endpoint")
    func getFormMalformed() async throws {
        try await ServerFixture.with { fixture in
            let noMethod = try await CurlResponse.fetch([fixture.url("/jsonrpc?id=1")])
            #expect(noMethod.status == 400)
            #expect(noMethod.body.contains("-32600"))
            let badParams = try await CurlResponse.fetch([fixture.url("/jsonrpc?method=m&id=1&params=%25%25%25")])
            #expect(badParams.status == 400)
            #expect(badParams.body.contains("-32700"))
            #expect(fixture.endpoint.received.isEmpty)
        }
    }

    @Test("OPTIONS /jsonrpc answers the CORS preflight as aria2 does")
    func corsPreflight() async throws {
        try await ServerFixture.with { fixture in
            let response = try await CurlResponse.fetch([
                "-X", "OPTIONS", "-H", "Origin: http://ariang.example", "-H", "Access-Control-Request-Method: POST",
                fixture.url("/jsonrpc"),
            ])
            #expect(response.status == 200)
            #expect(response.headers["access-control-allow-origin"] == "*")
            #expect(response.headers["access-control-allow-methods"] == "POST, GET, OPTIONS")
            #expect(response.headers["access-control-allow-headers"] == "Content-Type")
            #expect(response.headers["access-control-max-age"] == "1728000")
            #expect(fixture.endpoint.received.isEmpty)
        }
    }

    @Test(
        "Unknown paths get 404 and known paths asked with the wrong method get 405 with Allow",
        arguments: [
            ("GET", "/nowhere", 404, nil),
            ("POST", "/", 405, "GET"),
            ("DELETE", "/jsonrpc", 405, "POST, GET, OPTIONS"),
            ("PUT", "/index.html", 405, "GET"),
        ] as [(String, String, Int, String?)]
    )
    func notFoundAndWrongMethod(method: String, path: String, status: Int, allow: String?) async throws {
        try await ServerFixture.with { fixture in
            let response = try await CurlResponse.fetch(["-X", method, fixture.url(path)])
            #expect(response.status == status)
            #expect(response.headers["allow"] == allow)
        }
    }

    @Test(
        "GET / and /index.html serve the page, uncached, under a Content-Security-Policy",
        arguments: ["/", "/index.html"])
    func pageServed(path: String) async throws {
        try await ServerFixture.with(page: DaemonPage.html) { fixture in
            let response = try await CurlResponse.fetch([fixture.url(path)])
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "text/html; charset=utf-8")
            #expect(response.headers["cache-control"] == "no-store")
            let policy = try #require(response.headers["content-security-policy"])
            #expect(policy.contains("default-src 'none'"))
            #expect(policy.contains("connect-src 'self' ws: wss:"))
            #expect(response.body == String(decoding: DaemonPage.html, as: UTF8.self))
            for hook in [#"id="token""#, #"id="add-url""#, #"id="add-button""#, #"id="connection""#] {
                #expect(response.body.contains(hook), "the page lacks \(hook)")
            }
        }
    }

    @Test("Malformed HTTP gets 400 and the connection closed")
    func malformedRequest() async throws {
        try await ServerFixture.with { fixture in
            let client = try await RawTCPClient(host: fixture.host, port: fixture.port)
            try await client.send("NOT HTTP AT ALL\r\n\u{1}\u{2}\r\n\r\n")
            let answer = try await client.receiveUntilClosed()
            #expect(answer.hasPrefix("HTTP/1.1 400"))
            await client.close()
        }
    }

    @Test("Pipelined requests sent in one write are answered in order")
    func pipelinedRequestsInOrder() async throws {
        try await ServerFixture.with { fixture in
            let client = try await RawTCPClient(host: fixture.host, port: fixture.port)
            let bodies = (1...5).map { #"{"jsonrpc":"2.0","method":"m","id":\#($0)}"# }
            let requests = bodies.map {
                "POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \($0.utf8.count)\r\n\r\n\($0)"
            }
            try await client.send(requests.joined())
            try await client.waitUntilReceived("HTTP/1.1 200", count: 5)
            try await client.waitUntilReceived(#""id":5}}"#)
            let answers = client.received
            let positions = bodies.map { answers.range(of: $0)?.lowerBound }
            #expect(positions.allSatisfy { $0 != nil })
            #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted())
            #expect(fixture.endpoint.received == bodies)
            await client.close()
        }
    }

    // MARK: - WebSocket

    @Test("A WebSocket text message is answered with one text message")
    func webSocketRoundTrip() async throws {
        try await ServerFixture.with { fixture in
            let client = try await WebSocketTestClient.connect(host: fixture.host, port: fixture.port)
            try await client.send(.text, Self.request)
            let answer = try await client.frame(0)
            #expect(answer.opcode == .text)
            #expect(String(buffer: answer.data) == #"{"jsonrpc":"2.0","result":"# + Self.request + "}")
            await client.close()
        }
    }

    @Test("A notification pushed by the endpoint reaches the WebSocket client")
    func webSocketNotification() async throws {
        try await ServerFixture.with { fixture in
            let client = try await WebSocketTestClient.connect(host: fixture.host, port: fixture.port)
            try await Polling.until("the server to subscribe to notifications", timeout: Polling.patience) {
                fixture.endpoint.subscriberCount == 1
            }
            let notification =
                #"{"jsonrpc":"2.0","method":"aria2.onDownloadStart","params":[{"gid":"2089b05ecca3d829"}]}"#
            fixture.endpoint.push(notification)
            #expect(try await client.text(0) == notification)
            await client.close()
        }
    }

    @Test("Pings get pongs, a fragmented message is answered whole, and a binary message is read as text")
    func webSocketFramingDetails() async throws {
        try await ServerFixture.with { fixture in
            let client = try await WebSocketTestClient.connect(host: fixture.host, port: fixture.port)
            try await client.send(.ping, "are you there")
            let pong = try await client.frame(0)
            #expect(pong.opcode == .pong)
            #expect(String(buffer: pong.data) == "are you there")

            let whole = #"{"jsonrpc":"2.0","method":"aria2.tellActive","id":"frag"}"#
            let middle = whole.index(whole.startIndex, offsetBy: 20)
            try await client.send(.text, String(whole[..<middle]), fin: false)
            try await client.send(.ping, "between fragments")
            try await client.send(.continuation, String(whole[middle...]), fin: true)
            try await Polling.until("the pong and the answer", timeout: Polling.patience) { client.received.count >= 3 }
            let rest = client.received.dropFirst()
            #expect(rest.contains { $0.opcode == .pong && String(buffer: $0.data) == "between fragments" })
            #expect(rest.contains { $0.opcode == .text && String(buffer: $0.data).contains(#""id":"frag""#) })
            #expect(fixture.endpoint.received == [whole])

            try await client.send(.binary, Self.request)
            let answer = try await client.frame(3)
            #expect(answer.opcode == .text)
            #expect(String(buffer: answer.data).hasSuffix(Self.request + "}"))
            await client.close()
        }
    }

    @Test("Many requests in flight on one socket come back as whole, separate messages")
    func webSocketManyRequestsInFlight() async throws {
        try await ServerFixture.with { fixture in
            let client = try await WebSocketTestClient.connect(host: fixture.host, port: fixture.port)
            let padding = String(repeating: "p", count: 50_000)
            let requests = (0..<40).map {
                #"{"jsonrpc":"2.0","method":"m","id":\#($0),"params":[""# + padding + #""]}"#
            }
            for request in requests {
                try await client.send(.text, request)
            }
            _ = try await client.frame(requests.count - 1)
            let answers = Set(client.received.map { String(buffer: $0.data) })
            #expect(answers == Set(requests.map { #"{"jsonrpc":"2.0","result":"# + $0 + "}" }))
            await client.close()
        }
    }

    @Test("A client's close frame is answered with a close frame, and its notification stream is dropped")
    func webSocketClientCloses() async throws {
        try await ServerFixture.with { fixture in
            let client = try await WebSocketTestClient.connect(host: fixture.host, port: fixture.port)
            try await Polling.until("the server to subscribe", timeout: Polling.patience) {
                fixture.endpoint.subscriberCount == 1
            }
            try await client.sendClose(code: .normalClosure)
            var close = try await client.frame(0).unmaskedData
            #expect(close.readWebSocketErrorCode() == .normalClosure)
            try await client.waitUntilClosed()
            try await Polling.until("the notification stream to be dropped", timeout: Polling.patience) {
                fixture.endpoint.subscriberCount == 0
            }
            await client.close()
        }
    }

    @Test("stop() sends open WebSocket clients a close frame (going away), closes them, and returns")
    func stopClosesWebSockets() async throws {
        let endpoint = EchoEndpoint()
        let server = DaemonServer(configuration: .init(host: "127.0.0.1", port: 0), endpoint: endpoint)
        let (host, port) = try await server.start()
        let client: WebSocketTestClient
        do {
            client = try await WebSocketTestClient.connect(host: host, port: port)
            try await Polling.until("the server to subscribe", timeout: Polling.patience) {
                endpoint.subscriberCount == 1
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        try await client.waitUntilClosed()
        var close = try #require(client.received.last { $0.opcode == .connectionClose }).unmaskedData
        #expect(close.readWebSocketErrorCode() == .goingAway)
        #expect(endpoint.subscriberCount == 0)
        await server.stop()
        await client.close()
    }

    @Test("stop() closes a connection that never sent a request, and idle keep-alive ones")
    func stopClosesSilentConnections() async throws {
        let server = DaemonServer(configuration: .init(host: "127.0.0.1", port: 0), endpoint: EchoEndpoint())
        let (host, port) = try await server.start()
        let silent = try await RawTCPClient(host: host, port: port)
        let idle = try await RawTCPClient(host: host, port: port)
        try await idle.send("GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n")
        try await idle.waitUntilReceived("not found")
        await server.stop()
        #expect(try await silent.receiveUntilClosed().isEmpty)
        #expect(try await idle.receiveUntilClosed().hasPrefix("HTTP/1.1 404"))
        await silent.close()
        await idle.close()
    }

    // MARK: - Binding

    @Test("Two servers asked for port 0 get different free ports; a taken port is a clear error")
    func portZeroAndTakenPort() async throws {
        try await ServerFixture.with { first in
            try await ServerFixture.with { second in
                #expect(first.port != second.port)
                #expect(first.port > 0 && second.port > 0)
                let clash = DaemonServer(
                    configuration: .init(host: "127.0.0.1", port: first.port), endpoint: EchoEndpoint())
                let error = await #expect(throws: DaemonServerError.self) { try await clash.start() }
                #expect(error?.description.contains("port \(first.port)") == true)
                await clash.stop()
                // Both still serve.
                for fixture in [first, second] {
                    let response = try await CurlResponse.fetch([fixture.url("/nowhere")])
                    #expect(response.status == 404)
                }
            }
        }
    }

    @Test("The IPv6 loopback ::1 can be bound and served", .enabled(if: Self.hasIPv6Loopback))
    func ipv6Loopback() async throws {
        try await ServerFixture.with(host: "::1") { fixture in
            #expect(fixture.host == "::1")
            let response = try await CurlResponse.fetch(["-g", "--data-binary", Self.request, fixture.url("/jsonrpc")])
            #expect(response.status == 200)
        }
    }

    @Test("start() twice is an error; stop() before start() and twice is harmless")
    func lifecycleMisuse() async throws {
        let server = DaemonServer(configuration: .init(host: "127.0.0.1", port: 0), endpoint: EchoEndpoint())
        _ = try await server.start()
        await #expect(throws: DaemonServerError.self) { try await server.start() }
        await server.stop()
        await server.stop()
        let neverStarted = DaemonServer(configuration: .init(), endpoint: EchoEndpoint())
        await neverStarted.stop()
        await #expect(throws: DaemonServerError.self) { try await neverStarted.start() }
    }

    private static var hasIPv6Loopback: Bool {
        (try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8))?.contains(" lo") ?? false
    }

    private static func urlEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}

extension DaemonServerTests {
    @Test(
        "A WebSocket message over maximumBodyBytes closes the socket with 1009, whole or in fragments",
        arguments: [false, true]
    )
    func webSocketMessageTooBig(fragmented: Bool) async throws {
        try await ServerFixture.with(maximumBodyBytes: 1024) { fixture in
            let client = try await WebSocketTestClient.connect(host: fixture.host, port: fixture.port)
            let half = String(repeating: "z", count: 800)
            if fragmented {
                try await client.send(.text, half, fin: false)
                try await client.send(.continuation, half, fin: true)
            } else {
                try await client.send(.text, half + half)
            }
            try await client.waitUntilClosed()
            var close = try #require(client.received.first { $0.opcode == .connectionClose }).unmaskedData
            #expect(close.readWebSocketErrorCode() == .messageTooLarge)
            #expect(fixture.endpoint.received.isEmpty)
            await client.close()
        }
    }
}

extension DaemonServerTests {
    @Test(
        "Hostile or broken input gets an HTTP error answer and never takes the server down",
        arguments: [
            "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
            "POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
            "POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnot hex\r\n",
            "GET /jsonrpc?method=%&id=%ff%fe&params=%%% HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /jsonrpc HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
            "GET /jsonrpc HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 99\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 200_000) + "\r\n\r\n",
            "GET http://elsewhere/ HTTP/1.1\r\nHost: x\r\n\r\n",
            "\u{16}\u{3}\u{1}\u{0}\u{a5}\u{1}\u{0}\u{0}\u{a1}\u{3}\u{3}\r\n\r\n",
            "\u{0}\u{0}\u{0}\u{0}\r\n\r\n",
        ]
    )
    func hostileInput(input: String) async throws {
        try await ServerFixture.with { fixture in
            let client = try await RawTCPClient(host: fixture.host, port: fixture.port)
            try? await client.send(input)
            try await client.waitUntilReceived("HTTP/1.1 ")
            #expect(!client.received.hasPrefix("HTTP/1.1 2") || input.hasPrefix("GET http"))
            await client.close()
            let response = try await CurlResponse.fetch(["--data-binary", Self.request, fixture.url("/jsonrpc")])
            #expect(response.status == 200)
        }
    }
}

extension DaemonServerTests {
    @Test("An upgrade the server will not make is served as plain HTTP instead of hanging")
    func unwantedUpgradeServedAsHTTP() async throws {
        try await ServerFixture.with { fixture in
            let upgrade = ["-H", "Connection: Upgrade", "-H", "Upgrade: websocket"]
            let page = try await CurlResponse.fetch(upgrade + [fixture.url("/")])
            #expect(page.status == 200)
            #expect(page.headers["content-type"] == "text/html; charset=utf-8")

            let h2c = [
                "-H", "Connection: Upgrade, HTTP2-Settings", "-H", "Upgrade: h2c", "-H",
                "HTTP2-Settings: AAMAAABkAAQAAP__",
            ]
            let rpc = try await CurlResponse.fetch(h2c + ["--data-binary", Self.request, fixture.url("/jsonrpc")])
            #expect(rpc.status == 200)
            #expect(fixture.endpoint.received == [Self.request])
        }
    }
}
