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
