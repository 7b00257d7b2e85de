import BraidDaemon
import NIOHTTP1
import Testing

@testable import BraidDaemon

/// Without a secret, only programs on this machine and the daemon's own page reach `/jsonrpc`: a request another
/// site's page makes the browser send (a cross-origin POST, a WebSocket, a DNS-rebound name) is refused with 403
/// and never reaches the endpoint. With a secret, every origin may call, as AriaNg needs.
@Suite("DaemonServer origins")
struct DaemonServerOriginTests {
    private static let request = #"{"jsonrpc":"2.0","method":"aria2.addUri","id":"1","params":[["http://x/"]]}"#

    @Test(
        "without a secret, another site's POST, a rebound host name and a foreign WebSocket handshake get 403",
        arguments: [
            ["-H", "Origin: http://evil.example", "-H", "Content-Type: text/plain"],
            ["-H", "Host: evil.example:6800"],
            ["-H", "Host: 127.0.0.1.evil.example"],
            ["-H", "Origin: null"],
            ["-H", "Sec-Fetch-Site: cross-site", "-H", "Sec-Fetch-Mode: no-cors"],
            // A browser that sends neither Origin nor Sec-Fetch-Site says nothing of the page behind the request.
            ["-H", "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:60.0) Gecko/20100101 Firefox/60.0"],
            [
                "-H", "Origin: http://evil.example", "-H", "Connection: Upgrade", "-H", "Upgrade: websocket",
                "-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "-H", "Sec-WebSocket-Version: 13", "--get",
            ],
        ]
    )
    func refused(headers: [String]) async throws {
        try await ServerFixture.with { fixture in
            let response = try await CurlResponse.fetch(
                headers + ["--data-binary", Self.request, fixture.url("/jsonrpc")]
            )
            #expect(response.status == 403)
            #expect(fixture.endpoint.received.isEmpty)
        }
    }

    @Test("without a secret, aria2's JSONP answer (made for other sites' scripts) is refused; with one it is given")
    func jsonp() async throws {
        let query = "/jsonrpc?method=aria2.tellActive&id=1&params=W10%3D&jsoncallback=steal"
        try await ServerFixture.with { fixture in
            let response = try await CurlResponse.fetch([fixture.url(query)])
            #expect(response.status == 403)
            #expect(fixture.endpoint.received.isEmpty)
        }
        try await ServerFixture.with(admitsOtherOrigins: true) { fixture in
            let response = try await CurlResponse.fetch([fixture.url(query)])
            #expect(response.status == 200)
            #expect(response.body.hasPrefix("steal("))
        }
    }

    @Test("without a secret, the daemon's own page (same origin) and programs without an Origin are served")
    func sameOrigin() async throws {
        try await ServerFixture.with { fixture in
            let origin = "http://127.0.0.1:\(fixture.port)"
            let page = try await CurlResponse.fetch([
                "-H", "Origin: \(origin)", "--data-binary", Self.request, fixture.url("/jsonrpc"),
            ])
            #expect(page.status == 200)
            let program = try await CurlResponse.fetch(["--data-binary", Self.request, fixture.url("/jsonrpc")])
            #expect(program.status == 200)
            #expect(fixture.endpoint.received.count == 2)
        }
    }

    @Test(
        "without a secret, the GET form from a browser needs Origin or Sec-Fetch-Site; programs need neither",
        arguments: [
            (["-A", "Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 Chrome/70.0"], 403),
            (
                ["-A", "Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 Chrome/120.0", "-H", "Sec-Fetch-Site: none"],
                200
            ),
            (["-A", "Mozilla/5.0 (X11) Firefox/120.0", "-H", "Sec-Fetch-Site: same-origin"], 200),
            (["-A", "python-requests/2.31"], 200),
            ([], 200),
        ]
    )
    func getFormFromBrowsers(headers: [String], status: Int) async throws {
        try await ServerFixture.with { fixture in
            let response = try await CurlResponse.fetch(
                headers + [fixture.url("/jsonrpc?method=aria2.tellActive&id=1&params=W10%3D")])
            #expect(response.status == status)
            #expect(fixture.endpoint.received.count == (status == 200 ? 1 : 0))
        }
    }

    @Test("a program on this machine is one that is no browser and names the daemon by a loopback address")
    func programOnThisMachine() {
        func headers(_ pairs: [(String, String)]) -> HTTPHeaders { HTTPHeaders(pairs) }
        #expect(OriginPolicy.isProgramOnThisMachine(headers([("Host", "127.0.0.1:6800")])))
        #expect(
            OriginPolicy.isProgramOnThisMachine(
                headers([("Host", "127.0.0.1:6800"), ("Origin", "http://127.0.0.1:6800")])))
        #expect(
            !OriginPolicy.isProgramOnThisMachine(
                headers([
                    ("Host", "127.0.0.1:6800"), ("Origin", "http://127.0.0.1:6800"), ("User-Agent", "Mozilla/5.0"),
                ])
            ))
        #expect(!OriginPolicy.isProgramOnThisMachine(headers([("Host", "192.168.1.2:6800")])))
        #expect(
            !OriginPolicy.isProgramOnThisMachine(
                headers([("Host", "127.0.0.1:6800"), ("Sec-Fetch-Mode", "websocket")])))
        #expect(
            !OriginPolicy.isProgramOnThisMachine(
                headers([("Host", "127.0.0.1:6800"), ("Origin", "http://evil.example")])))
    }

    @Test("with a secret, any origin may call (the token guards every method)")
    func withSecret() async throws {
        try await ServerFixture.with(admitsOtherOrigins: true) { fixture in
            let response = try await CurlResponse.fetch(
                ["-H", "Origin: http://ariang.example", "--data-binary", Self.request, fixture.url("/jsonrpc")]
            )
            #expect(response.status == 200)
        }
    }

    @Test("loopback host names: addresses and localhost, with or without a port; nothing a DNS answer can change")
    func loopbackHosts() {
        for host in ["127.0.0.1:6800", "127.0.0.1", "localhost:1", "LOCALHOST", "[::1]:6800", "[::1]", "127.1.2.3:80"] {
            #expect(OriginPolicy.isLoopback(host: host), "\(host)")
        }
        for host in ["evil.example", "127.0.0.1.nip.io:80", "[::2]:1", "127.0.0.1:x", "10.0.0.1:6800", "", "[::1"] {
            #expect(!OriginPolicy.isLoopback(host: host), "\(host)")
        }
    }
}
