import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// Every source of a URL × every kind of credential: a server sees the user's credential if and only if the user
/// named its origin (scheme, host and port). Two test servers on loopback are two origins on one host, so a
/// cookie jar's domain and a netrc `machine` match both, and only the origin rule keeps them apart.
@Suite("credentials: every source of URLs × every kind of credential", .serialized)
struct CredentialScopeTests {
    static let content = TestContent(seed: 2626, size: 4 << 20)

    /// A credential the user gives, and how a server's request log shows it arrived.
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        /// `-H 'Authorization: Bearer …'`.
        case header
        /// `-b JAR`, a Netscape jar whose cookie is for the domain 127.0.0.1 (every port).
        case cookie
        /// `--netrc-file FILE` with a `machine 127.0.0.1` entry (every port).
        case netrc
        /// `http://user:password@…` in the URLs the user writes.
        case userinfo

        var testDescription: String { rawValue }

        static let login = "url-user:url-password"

        /// The arguments that give this credential, with its files written into `directory`.
        func arguments(in directory: TemporaryDirectory) throws -> [String] {
            switch self {
            case .header:
                return ["-H", "Authorization: Bearer header-secret"]
            case .cookie:
                let jar = directory.appending("cookies.txt")
                try Data("127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tjar-secret\n".utf8).write(to: jar)
                return ["-b", jar.path]
            case .netrc:
                let netrc = directory.appending("netrc")
                try Data("machine 127.0.0.1 login netrc-user password netrc-password\n".utf8).write(to: netrc)
                return ["--netrc-file", netrc.path]
            case .userinfo:
                return []
            }
        }

        /// `url` as the user writes it: with the login, for `.userinfo`.
        func written(_ url: String) -> String {
            self == .userinfo ? url.replacingOccurrences(of: "http://", with: "http://\(Self.login)@") : url
        }

        /// Whether `request` carried this credential.
        func carried(by request: TestServer.RequestRecord) -> Bool {
            switch self {
            case .header: request.authorization == "Bearer header-secret"
            case .cookie: request.cookie?.contains("session=jar-secret") == true
            case .netrc: request.authorization == Self.basic("netrc-user:netrc-password")
            case .userinfo: request.authorization == Self.basic(Self.login)
            }
        }

        private static func basic(_ login: String) -> String {
            "Basic " + Data(login.utf8).base64EncodedString()
        }
    }

    /// Where the URL of the requests under watch came from.
    enum URLSource: String, CaseIterable, CustomTestStringConvertible {
        /// `braid URL`: the watched server is the URL's.
        case commandLine
        /// The second URL of a list line, a mirror of the first.
        case mirror
        /// A line of `-i LIST`.
        case listEntry
        /// A URL of a Metalink file given by its path.
        case localMetalink
        /// A URL on the user's origin, listed by a Metalink that origin served.
        case servedMetalinkOnNamedOrigin
        /// A URL on another origin, listed by a Metalink the user's origin served.
        case servedMetalink
        /// Where the user's URL redirects to.
        case redirectTarget
        /// Where a mirror on a list line redirects to, while the line's first URL serves ranges on the named
        /// origin: connections move between a source that may carry credentials and one that may not.
        case mirrorRedirectTarget
        /// The user's URL redirects to a Metalink another origin serves, listing that origin's URLs (the bug of
        /// issue 26: the document and the file it lists were both sent the user's header).
        case servedMetalinkThroughRedirect

        var testDescription: String { rawValue }

        /// Whether the user named the watched origin, and so whether its server must see the credential.
        var userNamed: Bool {
            switch self {
            case .commandLine, .mirror, .listEntry, .localMetalink, .servedMetalinkOnNamedOrigin: true
            case .servedMetalink, .redirectTarget, .mirrorRedirectTarget, .servedMetalinkThroughRedirect: false
            }
        }
    }

    /// Two origins: `named`, whose URLs the user gives (`/f`, a redirect at `/start`, Metalink documents), and
    /// `other`, on another port; and a scratch directory.
    struct Origins {
        let named: TestServer
        let other: TestServer
        let directory: TemporaryDirectory

        init() throws {
            other = TestServer(routes: ["/f.bin": .init(content: CredentialScopeTests.content)])
            try other.start()
            named = TestServer(routes: ["/f.bin": .init(content: CredentialScopeTests.content)])
            try named.start()
            directory = try TemporaryDirectory(prefix: "braid-credentials")
        }

        /// A Metalink document for one file, `f.bin`, at `urls`.
        static func metalink(_ urls: [String]) -> TestServer.Document {
            TestServer.metalinkDocument([TestServer.MetalinkFile(name: "f.bin", content: content, urls: urls)])
        }

        /// Sets up `source` for `kind`: the routes and files it needs, the arguments naming what the user named,
        /// and the server whose requests are watched.
        func arrange(_ source: URLSource, _ kind: Kind) throws -> (arguments: [String], watched: TestServer) {
            let redirect = { (target: String) in
                TestServer.Route(content: content, faults: [.redirect(status: 302, to: .location(target))])
            }
            let output = ["-o", directory.appending("f.bin").path]
            let into = ["-d", directory.url.path]
            switch source {
            case .commandLine:
                return ([kind.written(named.url("/f.bin"))] + output, named)
            case .mirror:
                let line = kind.written(named.url("/f.bin")) + "\t" + kind.written(other.url("/f.bin"))
                return (try list([line]), other)
            case .listEntry:
                return (try list([kind.written(other.url("/f.bin"))]), other)
            case .localMetalink:
                let document = directory.appending("local.meta4")
                try Data(Self.metalink([kind.written(other.url("/f.bin"))]).bytes).write(to: document)
                return ([document.path] + into, other)
            case .servedMetalinkOnNamedOrigin:
                named.setRoute("/doc.meta4", .init(document: Self.metalink([named.url("/f.bin")])))
                return ([kind.written(named.url("/doc.meta4"))] + into, named)
            case .servedMetalink:
                named.setRoute("/doc.meta4", .init(document: Self.metalink([other.url("/f.bin")])))
                return ([kind.written(named.url("/doc.meta4"))] + into, other)
            case .redirectTarget:
                named.setRoute("/start", redirect(other.url("/f.bin")))
                return ([kind.written(named.url("/start"))] + output, other)
            case .mirrorRedirectTarget:
                named.setRoute("/start", redirect(other.url("/f.bin")))
                return (try list([kind.written(named.url("/f.bin")) + "\t" + kind.written(named.url("/start"))]), other)
            case .servedMetalinkThroughRedirect:
                other.setRoute("/doc.meta4", .init(document: Self.metalink([other.url("/f.bin")])))
                named.setRoute("/start", redirect(other.url("/doc.meta4")))
                return ([kind.written(named.url("/start"))] + into, other)
            }
        }

        /// `-i` with a list of `lines`, written into the directory.
        private func list(_ lines: [String]) throws -> [String] {
            let file = directory.appending("list.txt")
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file)
            return ["-i", file.path, "-d", directory.url.path]
        }

        func shutdown() {
            named.shutdown()
            other.shutdown()
            directory.remove()
        }
    }

    @Test(
        "a server sees the user's credential only on an origin the user named",
        arguments: URLSource.allCases, Kind.allCases)
    func credentialReachesOnlyNamedOrigins(source: URLSource, kind: Kind) async throws {
        let origins = try Origins()
        defer { origins.shutdown() }
        let (named, watched) = try origins.arrange(source, kind)
        let run = try await BraidCLI.run(
            named + (try kind.arguments(in: origins.directory))
                + ["-q", "--no-fsync", "-n", "4"])
        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: origins.directory.appending("f.bin").path) == nil)
        #expect(origins.named.waitUntilIdle() && origins.other.waitUntilIdle())

        let requests = watched.requestLog
        #expect(requests.contains { $0.method == "GET" }, "the watched origin was asked for the file")
        // The user's own origin always had the credential: it was in play, and went where it belonged.
        #expect(
            origins.named.requestLog.allSatisfy(kind.carried),
            "\(origins.named.requestLog.map { ($0.target, $0.authorization, $0.cookie) })")
        if source.userNamed {
            #expect(requests.allSatisfy(kind.carried), "\(requests.map { ($0.target, $0.authorization, $0.cookie) })")
        } else {
            let leaked = requests.filter(kind.carried)
            #expect(leaked.isEmpty, "sent to an origin the user did not name: \(leaked.map(\.target))")
        }
    }
}

/// The AWS SigV4 signature of an `s3://` download is a credential like the others: the store's origin gets it, and
/// an origin the store redirects to does not (nor the session token), while the download still completes there.
@Suite("credentials: the AWS signature of an s3:// download")
struct AWSSignatureScopeTests {
    @Test("the store's origin sees the signature and token; the origin it redirects to sees neither")
    func signatureStaysOnTheStore() async throws {
        let content = CredentialScopeTests.content
        let other = TestServer(routes: ["/f.bin": .init(content: content)])
        try other.start()
        defer { other.shutdown() }
        let store = TestServer(routes: [
            "/bucket/dir/f.bin": .init(
                content: content, faults: [.redirect(status: 307, to: .location(other.url("/f.bin")))])
        ])
        try store.start()
        defer { store.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-sigv4-scope")
        defer { directory.remove() }
        let output = directory.appending("f.bin")
        let environment = [
            "AWS_ENDPOINT_URL": String(store.url("/").dropLast()), "AWS_ENDPOINT_URL_S3": "", "AWS_REGION": "eu-west-1",
            "AWS_ACCESS_KEY_ID": "AKIDSCOPETEST", "AWS_SECRET_ACCESS_KEY": "scope-secret",
            "AWS_SESSION_TOKEN": "scope-token",
        ]

        let run = try await BraidCLI.run(
            ["s3://bucket/dir/f.bin", "-o", output.path, "-q", "--no-fsync", "-n", "4"], environment: environment)

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try content.firstDifference(fromFileAt: output.path) == nil)
        #expect(store.waitUntilIdle() && other.waitUntilIdle())
        let signed = store.requestLog
        #expect(!signed.isEmpty)
        for request in signed {
            #expect(
                request.authorization?.hasPrefix("AWS4-HMAC-SHA256 Credential=AKIDSCOPETEST/") == true
                    && request.authorization?.contains("/eu-west-1/s3/aws4_request") == true,
                "\(request.method) \(request.target): \(request.authorization ?? "unsigned")")
            #expect(request.headerNames.isSuperset(of: ["x-amz-date", "x-amz-content-sha256", "x-amz-security-token"]))
        }
        let elsewhere = other.requestLog
        #expect(elsewhere.contains { $0.method == "GET" }, "the redirect's target served the file")
        for request in elsewhere {
            #expect(request.authorization == nil, "\(request.method) \(request.target): \(request.authorization ?? "")")
            #expect(
                request.headerNames.isDisjoint(with: ["x-amz-security-token", "x-amz-date", "x-amz-checksum-mode"]))
        }
    }
}
