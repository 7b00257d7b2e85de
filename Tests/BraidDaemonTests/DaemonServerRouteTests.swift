import NIOHTTP1
import Testing

@testable import BraidDaemon

/// `HTTPRoute`: where each method and target goes, without a socket.
@Suite("DaemonServer routes")
struct DaemonServerRouteTests {
    @Test(
        "Method and target decide the route; query and fragment do not change the path",
        arguments: [
            (HTTPMethod.GET, "/", HTTPRoute.page),
            (.GET, "/index.html", .page),
            (.GET, "/?x=1#top", .page),
            (.POST, "/jsonrpc", .rpcPost),
            (.POST, "/jsonrpc?ignored=1", .rpcPost),
            (.GET, "/jsonrpc", .rpcGet(query: "")),
            (.GET, "/jsonrpc?method=m&id=1#frag", .rpcGet(query: "method=m&id=1")),
            (.OPTIONS, "/jsonrpc", .rpcPreflight),
            (.PUT, "/jsonrpc", .methodNotAllowed(allow: "POST, GET, OPTIONS")),
            (.HEAD, "/", .methodNotAllowed(allow: "GET")),
            (.GET, "/jsonrpc/", .notFound),
            (.GET, "/JSONRPC", .notFound),
            (.GET, "", .notFound),
            (.GET, "*", .notFound),
            (.GET, "http://host/jsonrpc", .notFound),
        ] as [(HTTPMethod, String, HTTPRoute)]
    )
    func route(method: HTTPMethod, target: String, expected: HTTPRoute) {
        #expect(HTTPRoute(method: method, target: target) == expected)
    }
}

extension DaemonServerRouteTests {
    private static func handshake(
        method: HTTPMethod = .GET,
        path: String = "/jsonrpc",
        dropping: String? = nil,
        replacing: (String, String)? = nil
    ) -> HTTPRequestHead {
        var headers = HTTPHeaders([
            ("Host", "127.0.0.1"), ("Upgrade", "websocket"), ("Connection", "keep-alive, Upgrade"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
        ])
        if let dropping { headers.remove(name: dropping) }
        if let (name, value) = replacing { headers.replaceOrAdd(name: name, value: value) }
        return HTTPRequestHead(version: .http1_1, method: method, uri: path, headers: headers)
    }

    @Test("Only a complete WebSocket handshake at /jsonrpc reaches NIO's upgrader")
    func acceptableHandshakes() {
        #expect(UpgradeRequestFilter.isAcceptableHandshake(Self.handshake()))
        #expect(UpgradeRequestFilter.isAcceptableHandshake(Self.handshake(path: "/jsonrpc?x=1")))
        #expect(UpgradeRequestFilter.isAcceptableHandshake(Self.handshake(replacing: ("Upgrade", "WebSocket"))))
        #expect(!UpgradeRequestFilter.isAcceptableHandshake(Self.handshake(path: "/")))
        #expect(!UpgradeRequestFilter.isAcceptableHandshake(Self.handshake(method: .POST)))
        #expect(!UpgradeRequestFilter.isAcceptableHandshake(Self.handshake(dropping: "Sec-WebSocket-Key")))
        #expect(!UpgradeRequestFilter.isAcceptableHandshake(Self.handshake(dropping: "Connection")))
        #expect(!UpgradeRequestFilter.isAcceptableHandshake(Self.handshake(replacing: ("Sec-WebSocket-Version", "8"))))
        #expect(!UpgradeRequestFilter.isAcceptableHandshake(Self.handshake(replacing: ("Upgrade", "h2c"))))
        #expect(!UpgradeRequestFilter.isAcceptableHandshake(Self.handshake(replacing: ("Sec-WebSocket-Key", ""))))
    }
}
