import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// Options curl and wget users reach for, with the meaning those tools give them.
@Suite("curl's habits")
struct CurlHabitsTests {
    static let content = TestContent(seed: 4242, size: 3 << 20)

    @Test("-U sends its text as the User-Agent of every request; without it, braid/VERSION")
    func userAgent() async throws {
        let server = TestServer(routes: ["/f": .init(content: Self.content)])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-habits")
        defer { directory.remove() }

        let custom = try await BraidCLI.run([
            server.url("/f"), "-q", "-n", "4", "-U", "Mozilla/5.0 (braid test)", "-o", directory.appending("a").path,
        ])
        #expect(custom.status == .exited(0), "\(custom.standardError)")
        let sent = server.requestLog.map(\.userAgent)
        #expect(sent.count > 2, "the probe and the ranges")
        #expect(sent.allSatisfy { $0 == "Mozilla/5.0 (braid test)" }, "\(sent)")

        let before = server.requestLog.count
        let plain = try await BraidCLI.run([server.url("/f"), "-q", "-o", directory.appending("b").path])
        #expect(plain.status == .exited(0), "\(plain.standardError)")
        #expect(server.requestLog.dropFirst(before).allSatisfy { $0.userAgent?.hasPrefix("braid/") == true })

        let broken = try await BraidCLI.run([server.url("/f"), "-U", "two\nlines", "-o", directory.appending("c").path])
        #expect(broken.status == .exited(2))
        #expect(broken.standardError.contains("--user-agent"), "\(broken.standardError)")
    }

    @Test("-R gives the file the server's Last-Modified time; without it the file is as new as the download")
    func remoteTime() async throws {
        let server = TestServer(routes: ["/f": .init(content: Self.content)])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-habits")
        defer { directory.remove() }

        let dated = directory.appending("dated").path
        let run = try await BraidCLI.run([server.url("/f"), "-q", "-R", "-o", dated])
        #expect(run.status == .exited(0), "\(run.standardError)")
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let expected = try #require(formatter.date(from: Self.content.lastModified)).timeIntervalSince1970
        let modified = try FileManager.default.attributesOfItem(atPath: dated)[.modificationDate] as? Date
        #expect(modified?.timeIntervalSince1970 == expected)
        #expect(try Self.content.firstDifference(fromFileAt: dated) == nil)

        let fresh = directory.appending("fresh").path
        let plain = try await BraidCLI.run([server.url("/f"), "-q", "-o", fresh])
        #expect(plain.status == .exited(0))
        let now = try FileManager.default.attributesOfItem(atPath: fresh)[.modificationDate] as? Date
        #expect((now?.timeIntervalSinceNow ?? -1000) > -600, "a file just written")
    }
}
