import BraidDaemon
import BraidTestSupport
import Foundation
import Testing

/// A Chromium the page tests can drive headless, if one is installed.
private let chromium: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
    .first { FileManager.default.isExecutableFile(atPath: $0) }

/// The page in a real browser (headless Chromium, when installed) against the real server and a fake aria2.
@Suite("DaemonServer page in Chromium")
struct DaemonServerPageTests {
    @Test(
        "The page connects, sends the token from the URL, and draws each download with its hooks",
        .enabled(if: chromium != nil)
    )
    func pageDrawsDownloads() async throws {
        let endpoint = FakeAria2Endpoint()
        let configuration = DaemonServer.Configuration(host: "127.0.0.1", port: 0, page: DaemonPage.html)
        let server = DaemonServer(configuration: configuration, endpoint: endpoint)
        let (host, port) = try await server.start()
        // Chromium's virtual time runs ahead while the page waits on the real server: on a loaded machine the
        // budget can pass before the WebSocket has answered, however large it is. Each run that ends before the
        // page drew its rows is followed by another, with twice the budget, until the page's state decides or a
        // deadline in real time has passed (a busy minute of a full run is outlasted, not counted in runs).
        var dom = ""
        do {
            var budget = 4000
            let deadline = ContinuousClock.now + Polling.patience
            while ContinuousClock.now < deadline {
                let profile = try TemporaryDirectory(prefix: "braid-chromium")
                defer { profile.remove() }
                let result = try await ChildProcess.run(
                    try #require(chromium),
                    [
                        "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--user-data-dir=\(profile.url.path)",
                        "--virtual-time-budget=\(budget)", "--dump-dom", "http://\(host):\(port)/#token=s3cret",
                    ],
                    timeout: .seconds(60)
                )
                dom = result.standardOutput
                if dom.contains(#"data-state="open""#) && dom.contains(#"<b id="num-active">1</b>"#) { break }
                budget = min(budget * 2, 32000)
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()

        #expect(dom.contains(#"<span id="connection" data-state="open" role="status">connected</span>"#))
        #expect(endpoint.methods.contains("aria2.tellActive"))
        #expect(endpoint.firstParameters.contains("token:s3cret"))
        let activeRow = #"class="download" data-gid="2089b05ecca3d829" data-status="active""#
        #expect(dom.contains(activeRow + #" data-completed="400" data-total="1000""#))
        #expect(dom.contains(#"data-gid="d270c8a2cb6b4f2c" data-status="complete""#))
        // Server-provided text is text: the file name's markup is escaped, never parsed.
        #expect(dom.contains("ubuntu&lt;b&gt;.iso"))
        #expect(dom.contains("notes.txt"))
        #expect(dom.contains(#"class="pause""#) && dom.contains(#"class="remove""#))
        #expect(dom.contains(#"class="segment-map""#))
        #expect(dom.contains("2 segments, 1 active"))
        #expect(dom.contains(#"<b id="num-active">1</b>"#))
    }
}
