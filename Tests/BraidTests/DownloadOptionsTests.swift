import Testing

@testable import Braid

/// What `DownloadOptions.validate()` catches before any network traffic.
@Suite("DownloadOptions")
struct DownloadOptionsTests {
    func options(_ change: (inout DownloadOptions) -> Void) -> DownloadOptions {
        var options = DownloadOptions()
        change(&options)
        return options
    }

    @Test("The defaults are valid")
    func defaults() {
        let options = DownloadOptions()
        #expect(throws: Never.self) { try options.validate() }
        #expect(options.connections == 8)
        #expect(options.retryPolicy.maximumAttempts == options.maximumAttempts)
    }

    @Test("1 to 1024 connections are accepted", arguments: [1, 2, 64, 1024])
    func acceptsConnections(connections: Int) {
        #expect(throws: Never.self) { try options { $0.connections = connections }.validate() }
    }

    @Test("Fewer than 1 or more than 1024 connections is a usage error", arguments: [0, -1, 1025, Int.max])
    func rejectsConnections(connections: Int) {
        let error = #expect(throws: BraidError.self) { try options { $0.connections = connections }.validate() }
        #expect(error?.code == .usage)
        #expect(error?.message.contains("\(connections)") == true)
    }

    @Test("Attempts and the stall timeout must be at least 1")
    func rejectsZeroLimits() {
        let attempts = #expect(throws: BraidError.self) { try options { $0.maximumAttempts = 0 }.validate() }
        #expect(attempts?.code == .usage)
        let stall = #expect(throws: BraidError.self) { try options { $0.stallTimeoutSeconds = 0 }.validate() }
        #expect(stall?.code == .usage)
    }

    @Test(
        "Well-formed request headers are accepted",
        arguments: [["Authorization: Bearer x"], ["X-Empty:"], ["A: 1", "B:2"], ["Cookie: a=b; c=d:e"]]
    )
    func acceptsHeaders(headers: [String]) {
        #expect(throws: Never.self) { try options { $0.headers = headers }.validate() }
    }

    @Test(
        "Malformed headers and header injection are usage errors",
        arguments: [
            "no colon",
            "",
            ": no name",
            "X-A: a\rInjected: 1",
            "X-A: a\nInjected: 1",
        ]
    )
    func rejectsHeaders(header: String) {
        let error = #expect(throws: BraidError.self) { try options { $0.headers = ["Good: 1", header] }.validate() }
        #expect(error?.code == .usage)
    }

    @Test(
        "A CR LF pair in a header is injection too, though Swift sees it as one Character",
        arguments: ["X-A: a\r\nInjected: 1", "X-A: a\r\n\r\nGET /other HTTP/1.1", "X-A: a\r\n"]
    )
    func rejectsCRLFInjection(header: String) {
        let error = #expect(throws: BraidError.self) { try options { $0.headers = [header] }.validate() }
        #expect(error?.code == .usage)
    }

    @Test("The request options carry the headers and timeouts through")
    func requestOptions() {
        let options = options {
            $0.headers = ["A: 1"]
            $0.insecure = true
            $0.connectTimeoutSeconds = 3
            $0.stallTimeoutSeconds = 4
        }
        #expect(options.requestOptions.headers == ["A: 1"])
        #expect(options.requestOptions.insecure)
        #expect(options.requestOptions.connectTimeoutSeconds == 3)
        #expect(options.requestOptions.stallTimeoutSeconds == 4)
    }

    @Test(
        "A proxy with an http, https, socks5 or socks5h scheme, or none, or empty is accepted",
        arguments: [
            "http://127.0.0.1:3128", "HTTPS://proxy.example", "socks5://u:p@[::1]:1080", "socks5h://proxy:1080",
            "proxy.example:3128", "",
        ]
    )
    func acceptsProxy(proxy: String) {
        #expect(throws: Never.self) { try options { $0.proxy = proxy }.validate() }
    }

    @Test(
        "A proxy with another scheme, no host or a control character is a usage error naming the option",
        arguments: ["ftp://proxy.example", "socks4://u:secret@proxy:1080", "http://", "http://proxy\r\nX: y"]
    )
    func rejectsProxy(proxy: String) {
        let error = #expect(throws: BraidError.self) { try options { $0.proxy = proxy }.validate() }
        #expect(error?.code == .usage)
        #expect(error?.option == .proxy)
        #expect(error?.message.contains("secret") == false)
    }

    @Test("A no-proxy list with a control character is a usage error naming the option")
    func rejectsNoProxy() {
        let error = #expect(throws: BraidError.self) { try options { $0.noProxy = "a.example\nb" }.validate() }
        #expect(error?.option == .noProxy)
        #expect(throws: Never.self) { try options { $0.noProxy = "localhost, .example.org" }.validate() }
    }

    @Test("The proxy and no-proxy list reach every request")
    func proxyReachesRequests() {
        let request = options {
            $0.proxy = "socks5h://127.0.0.1:1080"
            $0.noProxy = "localhost"
        }.requestOptions
        #expect(request.proxy == "socks5h://127.0.0.1:1080")
        #expect(request.noProxy == "localhost")
        #expect(DownloadOptions().requestOptions.proxy == nil)
    }
}
