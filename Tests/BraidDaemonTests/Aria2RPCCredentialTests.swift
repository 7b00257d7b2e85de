import Braid
import BraidJSON
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

@testable import BraidDaemon

/// An RPC call names its URIs as a command line does: its `header`s and userinfo go to those URIs' origins (a
/// mirror's included), never to another origin a redirect leads to.
@Suite("aria2 RPC: where a call's credentials go")
struct Aria2RPCCredentialTests {
    /// Where the watched requests' URL came from.
    enum Watched: String, CaseIterable, CustomTestStringConvertible {
        /// The call's second URI, a mirror on another origin: the user named it.
        case mirror
        /// Where the call's URI redirects to, on another origin: the server named it.
        case redirectTarget

        var testDescription: String { rawValue }
    }

    @Test(
        "a call's header and URL login reach the origins it named, and no origin a redirect leads to",
        arguments: Watched.allCases)
    func credentialScope(watched: Watched) async throws {
        let fixture = try Aria2RPCTests.Fixture()
        defer { Task { await fixture.stop() } }
        let other = TestServer(routes: ["/file.bin": .init(content: Aria2RPCTests.content)])
        try other.start()
        defer { other.shutdown() }
        fixture.server.setRoute(
            "/start",
            .init(
                content: Aria2RPCTests.content, faults: [.redirect(status: 302, to: .location(other.url("/file.bin")))])
        )
        let login = { (url: String) in url.replacingOccurrences(of: "http://", with: "http://rpc-user:rpc-pw@") }
        let uris =
            switch watched {
            case .mirror: [login(fixture.server.url("/file.bin")), other.url("/file.bin")]
            case .redirectTarget: [login(fixture.server.url("/start"))]
            }
        let gid = try #require(
            try await fixture.result(
                "aria2.addUri",
                [
                    .array(uris.map { .string($0) }),
                    .object([("header", .array([.string("X-Api-Key: rpc-key")])), ("split", .string("4"))]),
                ]
            ).stringValue)
        let status = try await fixture.waitForStatus(gid) { $0["status"] == .string("complete") }
        #expect(status["errorCode"] == .string("0"), "\(status.text)")
        #expect(fixture.server.waitUntilIdle() && other.waitUntilIdle())

        let basic = "Basic " + Data("rpc-user:rpc-pw".utf8).base64EncodedString()
        #expect(
            fixture.server.requestLog.allSatisfy { $0.headerNames.contains("x-api-key") && $0.authorization == basic })
        #expect(!other.requestLog.isEmpty)
        #expect(other.requestLog.allSatisfy { $0.authorization == nil }, "the login went to \(other.url("/"))")
        let keyed = other.requestLog.filter { $0.headerNames.contains("x-api-key") }
        switch watched {
        case .mirror: #expect(keyed.count == other.requestLog.count, "the mirror the call named gets the header")
        case .redirectTarget: #expect(keyed.isEmpty, "the header went where the server redirected")
        }
    }
}
