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

    @Test("--netrc-file sends each host its own login, and a redirect to another host none")
    func netrcPerHost() async throws {
        let server = TestServer(routes: [
            "/f": .init(content: Self.content),
            "/away": .init(size: 10, faults: [.redirect(status: 302, to: .otherHost(path: "/f"))]),
        ])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-habits")
        defer { directory.remove() }
        let netrc = directory.appending("netrc")
        try Data("machine 127.0.0.1 login alice password s3cret\n".utf8).write(to: netrc)

        let direct = try await BraidCLI.run([
            server.url("/f"), "-q", "--netrc-file", netrc.path, "-o", directory.appending("a").path,
        ])
        #expect(direct.status == .exited(0), "\(direct.standardError)")
        #expect(server.requestLog.allSatisfy { $0.authorization == "Basic YWxpY2U6czNjcmV0" }, "\(server.requestLog)")

        let before = server.requestLog.count
        let redirected = try await BraidCLI.run([
            server.url("/away"), "-q", "--netrc-file", netrc.path, "-o", directory.appending("b").path,
        ])
        #expect(redirected.status == .exited(0), "\(redirected.standardError)")
        let elsewhere = server.requestLog.dropFirst(before).filter { $0.host?.hasPrefix("localhost") == true }
        #expect(!elsewhere.isEmpty, "the download went to the other host")
        #expect(elsewhere.allSatisfy { $0.authorization == nil }, "\(elsewhere)")
        #expect(try Self.content.firstDifference(fromFileAt: directory.appending("b").path) == nil)

        let missing = try await BraidCLI.run([server.url("/f"), "--netrc-file", directory.appending("none").path])
        #expect(missing.status == .exited(2))
        #expect(missing.standardError.contains("--netrc-file"), "\(missing.standardError)")
    }

    @Test("--cookie sends each cookie of the jar only to the domain it names")
    func cookieJar() async throws {
        let server = TestServer(routes: ["/f": .init(content: Self.content)])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-habits")
        defer { directory.remove() }
        let jar = directory.appending("cookies.txt")
        let lines = [
            "# Netscape HTTP Cookie File",
            "127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tours",
            "example.org\tFALSE\t/\tFALSE\t0\tother\ttheirs",
        ]
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: jar)

        let run = try await BraidCLI.run([server.url("/f"), "-q", "-b", jar.path, "-o", directory.appending("a").path])
        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(server.requestLog.count > 2)
        #expect(server.requestLog.allSatisfy { $0.cookie == "session=ours" }, "\(server.requestLog.map(\.cookie))")
    }
}
