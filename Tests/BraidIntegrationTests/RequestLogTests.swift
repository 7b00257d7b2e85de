import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// `-vv` logs every request Braid sends, as `--help` says: the probe's, each redirect hop's, each range's, all
/// through `RequestLog`, with its method and URL (no password, no signature) and then its answer's status.
@Suite("braid -vv logs every request")
struct RequestLogTests {
    /// The password the URL given to braid carries.
    static let password = "pa55word-not-for-logs"

    /// A request line of braid's stderr: its method and the URL it names (`braid.method`, `braid.source`).
    struct LoggedRequest: Hashable, CustomStringConvertible {
        let method: String
        let url: String

        var description: String { "\(method) \(url)" }

        /// The request lines of `standardError`, in order (`StreamLogHandler`: `… braid.method=GET
        /// braid.source=URL … [Braid] request`).
        static func all(in standardError: String) -> [LoggedRequest] {
            standardError.split(separator: "\n").filter { $0.hasSuffix("] request") }.compactMap { line in
                guard let method = field("braid.method", of: line), let url = field("braid.source", of: line) else {
                    return nil
                }
                return LoggedRequest(method: method, url: url)
            }
        }

        private static func field(_ name: String, of line: Substring) -> String? {
            guard let start = line.range(of: " \(name)=") else { return nil }
            return String(line[start.upperBound...].prefix { $0 != " " })
        }
    }

    @Test(
        "each request the server saw has its line, through a redirect to a signed URL, with no password or signature",
        arguments: [
            (64 << 10, [String](), false),  // read whole by its first GET
            (8 << 20, ["-n", "4"], false),  // the first GET's body adopted, then ranges
            // A rerun with -N: a HEAD with If-Modified-Since, which the signed URL refuses, then a ranged GET.
            (64 << 10, ["-N"], true),
        ]
    )
    func everyRequestLogged(size: Int, options: [String], rerun: Bool) async throws {
        let content = TestContent(seed: 7, size: UInt64(size))
        let server = TestServer(routes: [
            "/file": .init(content: content, faults: [.requireSignedURL]),
            "/sign": .init(size: 0, faults: [.mintSignedURL(path: "/file", validFor: .seconds(300))]),
        ])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-vv")
        defer { directory.remove() }
        let output = directory.appending("out.bin").path
        let url = server.url("/sign").replacingOccurrences(of: "http://", with: "http://braid:\(Self.password)@")
        var before = 0
        if rerun {
            let first = try await BraidCLI.run(["--no-fsync", "-o", output, url])
            #expect(first.status == .exited(0), "\(first.standardError)")
            #expect(server.waitUntilIdle())
            before = server.requestLog.count
        }

        let run = try await BraidCLI.run(["-vv", "--no-fsync", "-o", output] + options + [url])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try content.firstDifference(fromFileAt: output) == nil)
        #expect(server.waitUntilIdle())
        let seen = Array(server.requestLog.dropFirst(before))
        let logged = LoggedRequest.all(in: run.standardError)
        // Each request at the server, as its line names it: its path and query, the signature hidden.
        let expected = seen.map { record in
            let target = record.target.replacingOccurrences(
                of: #"signature=[0-9a-f]+"#, with: "signature=***", options: .regularExpression)
            return LoggedRequest(method: record.method, url: target)
        }
        let loggedTargets = logged.map { request in
            let afterScheme = request.url.range(of: "://").map { request.url[$0.upperBound...] } ?? request.url[...]
            return LoggedRequest(method: request.method, url: String(afterScheme.drop { $0 != "/" }))
        }
        #expect(
            loggedTargets.sorted { $0.description < $1.description }
                == expected.sorted { $0.description < $1.description },
            "\(run.standardError)")
        #expect(seen.contains { $0.status == 302 } && seen.contains { $0.target.hasPrefix("/file?") })
        #expect(!rerun || seen.contains { $0.method == "HEAD" }, "\(seen.map { ($0.method, $0.target, $0.status) })")
        // The URL as given, its password hidden, is the first request's.
        #expect(logged.first?.url.hasPrefix("http://braid:***@127.0.0.1:") == true, "\(logged)")
        // Each status the server answered with shows in a response line.
        for status in Set(seen.map(\.status)) {
            #expect(run.standardError.contains("braid.status=\(status) "), "no response line says \(status)")
        }
        #expect(!run.standardError.contains(Self.password))
        for record in seen {
            guard let signature = record.target.firstMatch(of: #/signature=([0-9a-f]+)/#)?.1 else { continue }
            #expect(!run.standardError.contains(signature), "the signature \(signature) is in the log")
        }
    }
}
