import Testing

@testable import Braid

/// Which proxy `-v` says a request goes through: the one set explicitly, else the environment's as libcurl reads
/// it, and none for a host the no-proxy list names. Passwords are never repeated.
@Suite("ProxyRoute")
struct ProxyRouteTests {
    static func route(
        _ url: String,
        proxy: String? = nil,
        noProxy: String? = nil,
        environment: [String: String] = [:]
    ) -> ProxyRoute {
        ProxyRoute(url: url, proxy: proxy, noProxy: noProxy) { environment[$0] }
    }

    @Test("An explicit proxy wins over the environment, and its password is hidden")
    func explicitProxy() {
        let route = Self.route(
            "https://example.org/a.iso",
            proxy: "socks5h://user:secret@127.0.0.1:1080",
            environment: ["https_proxy": "http://other:3128"]
        )
        #expect(route.description == "proxy socks5h://user:***@127.0.0.1:1080 (set explicitly)")
    }

    @Test("A proxy without a scheme is http://, as libcurl reads it, and its password is hidden too")
    func schemelessProxy() {
        let route = Self.route("http://example.org/", proxy: "user:secret@proxy:3128")
        #expect(route.description == "proxy http://user:***@proxy:3128 (set explicitly)")
    }

    @Test("An empty explicit proxy means none, whatever the environment says")
    func emptyProxy() {
        let route = Self.route("http://example.org/", proxy: "", environment: ["http_proxy": "http://p:3128"])
        #expect(route.proxy == nil)
        #expect(route.source == .explicit)
        #expect(route.description == "no proxy (set explicitly as empty)")
    }

    @Test("The scheme's variable comes first, then ALL_PROXY; HTTP_PROXY in capitals is ignored, as libcurl does")
    func environmentOrder() {
        let environment = ["HTTP_PROXY": "http://upper:1", "ALL_PROXY": "socks5://all:2", "HTTPS_PROXY": "http://s:3"]
        #expect(Self.route("http://example.org/", environment: environment).source == .environment("ALL_PROXY"))
        #expect(Self.route("https://example.org/", environment: environment).source == .environment("HTTPS_PROXY"))
        let lower = ["http_proxy": "http://lower:1", "all_proxy": "socks5://all:2"]
        #expect(
            Self.route("http://example.org/", environment: lower).description
                == "proxy http://lower:1 (from http_proxy)")
    }

    @Test("No proxy anywhere is a direct connection")
    func noProxyAtAll() {
        #expect(Self.route("http://example.org/").description == "no proxy")
    }

    @Test(
        "The no-proxy list sends matching hosts direct: the name, its subdomains, '*'",
        arguments: [
            ("http://example.org/", "example.org", true), ("http://a.example.org/", ".example.org", true),
            ("http://badexample.org/", "example.org", false), ("http://127.0.0.1:8080/", "localhost,127.0.0.1", true),
            ("http://anything/", "*", true), ("http://example.net/", "example.org", false),
        ]
    )
    func bypass(url: String, list: String, direct: Bool) {
        let route = Self.route(url, proxy: "http://p:3128", noProxy: list)
        #expect((route.proxy == nil) == direct)
        #expect(route.bypassed == direct)
    }

    @Test("NO_PROXY from the environment applies when no list is given, and an explicit list replaces it")
    func environmentNoProxy() {
        let environment = ["http_proxy": "http://p:3128", "NO_PROXY": "example.org"]
        #expect(Self.route("http://example.org/", environment: environment).proxy == nil)
        #expect(Self.route("http://example.org/", noProxy: "other", environment: environment).proxy == "http://p:3128")
    }
}
