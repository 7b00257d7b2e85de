import Braid
import BraidJSON
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

@testable import BraidDaemon

/// aria2's JSON-RPC methods over the daemon's service, called in process (the sockets are `DaemonServerTests`'
/// and the real clients `DaemonClientTests`'): the answers aria2 gives, real downloads from a loopback server,
/// refusals of what would leave the download directory, and the session read back by a new service.
@Suite("aria2 RPC")
struct Aria2RPCTests {
    static let content = TestContent(seed: 77, size: 3 << 20)

    final class Fixture: Sendable {
        let directory: TemporaryDirectory
        let server: TestServer
        let service: DaemonService
        let rpc: Aria2RPC

        init(faults: [TestServer.Fault] = [], maximumActive: Int = 5, session: String? = nil) throws {
            directory = try TemporaryDirectory(prefix: "braid-daemon-rpc")
            server = TestServer(routes: ["/file.bin": .init(content: Aria2RPCTests.content, faults: faults)])
            try server.start()
            (service, rpc) = try Self.makeService(in: directory, session: session, maximumActive: maximumActive)
        }

        static func makeService(
            in directory: TemporaryDirectory,
            session: String?,
            maximumActive: Int
        ) throws -> (DaemonService, Aria2RPC) {
            var options = DownloadOptions()
            options.connections = 2
            options.syncOnCompletion = false
            options.stallTimeoutSeconds = 600
            let root = try DownloadDirectory(directory.url.path)
            let service = DaemonService(
                configuration: .init(
                    directory: root.root,
                    sessionPath: session ?? directory.appending(".braid-session").path,
                    limits: .init(concurrentDownloads: .fixed(maximumActive)),
                    baseOptions: options
                )
            )
            try service.start()
            return (service, Aria2RPC(service: service, directory: root, secret: "s3cret"))
        }

        func call(_ method: String, _ params: [JSON] = [], token: String? = "s3cret") async throws -> JSON {
            let tokenParam: [JSON] = token.map { [.string("token:\($0)")] } ?? []
            let request = JSON.object([
                ("jsonrpc", .string("2.0")), ("id", .string("t")), ("method", .string(method)),
                ("params", .array(tokenParam + params)),
            ])
            let response = try #require(await rpc.respond(to: request.bytes).body)
            return try JSON(parsing: response)
        }

        /// The result of a call that must succeed.
        func result(_ method: String, _ params: [JSON] = []) async throws -> JSON {
            let response = try await call(method, params)
            return try #require(response["result"], "\(method) failed: \(response.text)")
        }

        func status(_ gid: String) async throws -> JSON {
            try await result("aria2.tellStatus", [.string(gid)])
        }

        /// Polls the status until `condition` holds (a real condition, checked every 20 ms, up to 90 s).
        func waitForStatus(_ gid: String, _ condition: (JSON) -> Bool) async throws -> JSON {
            let deadline = ContinuousClock.now + .seconds(90)
            while true {
                let status = try await status(gid)
                if condition(status) { return status }
                guard ContinuousClock.now < deadline else {
                    Issue.record("timed out; last status \(status.text)")
                    return status
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        func stop() async {
            await service.stop()
            server.shutdown()
            directory.remove()
        }
    }

    static func error(_ response: JSON) -> (Int64?, String?) {
        (response["error"]?["code"]?.integerValue, response["error"]?["message"]?.stringValue)
    }

    @Test("without the secret, or with a wrong one, every aria2 method is Unauthorized; system methods need none")
    func secret() async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        #expect(Self.error(try await fixture.call("aria2.getGlobalStat", token: nil)) == (1, "Unauthorized"))
        #expect(Self.error(try await fixture.call("aria2.getGlobalStat", token: "s3cre")) == (1, "Unauthorized"))
        #expect(Self.error(try await fixture.call("aria2.getGlobalStat", token: "s3cret!")) == (1, "Unauthorized"))
        let methods = try await fixture.result("system.listMethods", [])
        #expect(methods.arrayValue?.contains(.string("aria2.addUri")) == true)
        #expect(JSONRPC.Gate.constantTimeEqual(Array("abc".utf8), Array("abc".utf8)))
        #expect(!JSONRPC.Gate.constantTimeEqual(Array("abc".utf8), Array("abd".utf8)))
        #expect(!JSONRPC.Gate.constantTimeEqual(Array("abc".utf8), Array("ab".utf8)))
    }

    @Test("framing errors are answered as aria2 answers them: parse error, invalid request, unknown method, batches")
    func framing() async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        let parse = try JSON(parsing: try #require(await fixture.rpc.respond(to: Array("{bad".utf8)).body))
        #expect(Self.error(parse) == (-32700, "Parse error."))
        let noID = try JSON(
            parsing: try #require(
                await fixture.rpc.respond(to: Array(#"{"jsonrpc":"2.0","method":"system.listMethods"}"#.utf8)).body))
        #expect(Self.error(noID) == (-32600, "Invalid Request."))
        #expect(Self.error(try await fixture.call("aria2.nope")) == (1, "No such method: aria2.nope"))
        #expect(
            Self.error(try await fixture.call("aria2.tellStatus", [.string("00000000000000ff")])) == (
                1, "GID 00000000000000ff is not found"
            ))
        let batch = try JSON(
            parsing: try #require(
                await fixture.rpc.respond(
                    to: Array(
                        #"[{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion","params":["token:s3cret"]},{"jsonrpc":"2.0","id":2,"method":"aria2.getVersion"}]"#
                            .utf8)
                ).body))
        #expect(batch.arrayValue?.count == 2)
        #expect(batch.arrayValue?[0]["result"]?["version"] == .string(BraidVersion.current))
        #expect(Self.error(try #require(batch.arrayValue?[1])) == (1, "Unauthorized"))
        let multicall = try #require(
            try await fixture.call(
                "system.multicall",
                [
                    .array([
                        .object([
                            ("methodName", .string("aria2.getGlobalStat")),
                            ("params", .array([.string("token:s3cret")])),
                        ]),
                        .object([("methodName", .string("aria2.getGlobalStat")), ("params", .array([]))]),
                    ])
                ],
                token: nil
            )["result"])
        #expect(multicall.arrayValue?[0].arrayValue?[0]["numActive"] == .string("0"))
        #expect(multicall.arrayValue?[1]["message"] == .string("Unauthorized"))
    }

    @Test(
        "addUri refuses what would leave the download directory or fetch anything but http(s), and queues nothing",
        arguments: [
            (#"["file:///etc/passwd"]"#, "{}"),
            (#"["http://127.0.0.1/a"]"#, #"{"dir":"/etc"}"#),
            (#"["http://127.0.0.1/a"]"#, #"{"dir":"../outside"}"#),
            (#"["http://127.0.0.1/a"]"#, #"{"out":"../escape.bin"}"#),
            (#"["http://127.0.0.1/a"]"#, #"{"out":"/etc/x"}"#),
            (#"["http://127.0.0.1/a"]"#, #"{"header":"X-A: 1\r\nX-B: 2"}"#),
            (#"["http://127.0.0.1/a"]"#, #"{"checksum":"sha-256=zz"}"#),
            (#"["http://127.0.0.1/a"]"#, #"{"split":"abc"}"#),
            (#"["http://127.0.0.1/a"]"#, #"{"max-download-limit":"fast"}"#),
            (#"["http://127.0.0.1/a"]"#, #"{"cache-peers":"ftp://cache/{path}"}"#),
            ("[]", "{}"),
        ]
    )
    func refusals(uris: String, options: String) async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        let response = try await fixture.call(
            "aria2.addUri", [try JSON(parsing: Array(uris.utf8)), try JSON(parsing: Array(options.utf8))])
        #expect(Self.error(response).0 == 1, "\(response.text)")
        let stat = try await fixture.result("aria2.getGlobalStat")
        #expect(stat["numActive"] == .string("0") && stat["numWaiting"] == .string("0"))
    }

    @Test("a link inside the download directory that points outside it is refused as a dir")
    func linkedDirectory() async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        try FileManager.default.createSymbolicLink(
            atPath: fixture.directory.appending("out").path, withDestinationPath: "/tmp")
        let response = try await fixture.call(
            "aria2.addUri", [.array([.string(fixture.server.url("/file.bin"))]), .object([("dir", .string("out"))])])
        #expect(Self.error(response).1?.contains("outside the download directory") == true, "\(response.text)")
    }

    @Test("addUri downloads the file into a subdirectory under out=; tellStatus reports it in aria2's fields")
    func download() async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        let gid = try #require(
            try await fixture.result(
                "aria2.addUri",
                [
                    .array([.string(fixture.server.url("/file.bin"))]),
                    .object([
                        ("dir", .string("sub")), ("out", .string("x/got.bin")), ("split", .string("3")),
                        (
                            "checksum",
                            .string(
                                "sha-256=" + Self.content.digest(.sha256).map { String(format: "%02x", $0) }.joined())
                        ),
                    ]),
                ]
            ).stringValue
        )
        #expect(DaemonTask.isValidGID(gid))
        let status = try await fixture.waitForStatus(gid) { $0["status"] == .string("complete") }
        let path = fixture.directory.appending("sub/x/got.bin").path
        #expect(status["files"]?.arrayValue?.first?["path"] == .string(path))
        #expect(status["totalLength"] == .string(String(Self.content.size)))
        #expect(status["completedLength"] == .string(String(Self.content.size)))
        #expect(status["errorCode"] == .string("0"))
        #expect(status["bitfield"] == .string("e0"), "three pieces of 1 MiB, all done")
        #expect(status["braid"]?["verification"] == .string("sha-256 verified against --checksum"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(Self.content.bytes(in: 0..<Self.content.size)))
        let keyed = try await fixture.result(
            "aria2.tellStatus", [.string(gid), .array([.string("gid"), .string("status")])])
        #expect(keyed == .object([("gid", .string(gid)), ("status", .string("complete"))]))
        let stopped = try await fixture.result(
            "aria2.tellStopped", [.integer(0), .integer(10), .array([.string("gid")])])
        #expect(stopped == .array([.object([("gid", .string(gid))])]))
        #expect(try await fixture.result("aria2.removeDownloadResult", [.string(gid)]) == .string("OK"))
        #expect(try await fixture.result("aria2.tellStopped", [.integer(0), .integer(10)]) == .array([]))
    }

    @Test("addUri's cache-peers: the file's slices come from the peer it names, checked against the digest")
    func cachePeers() async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        let cache = TestServer(routes: ["/cache/file.bin": .init(content: Self.content)])
        try cache.start()
        defer { cache.shutdown() }
        let template = "http://127.0.0.1:\(cache.port)/cache{path}"
        let digest = "sha-256=" + Self.content.digest(.sha256).map { String(format: "%02x", $0) }.joined()
        let gid = try #require(
            try await fixture.result(
                "aria2.addUri",
                [
                    .array([.string(fixture.server.url("/file.bin"))]),
                    .object([("cache-peers", .string(template)), ("checksum", .string(digest))]),
                ]
            ).stringValue
        )
        let status = try await fixture.waitForStatus(gid) { $0["status"] == .string("complete") }
        #expect(status["errorCode"] == .string("0"), "\(status.text)")
        let path = try #require(status["files"]?.arrayValue?.first?["path"]?.stringValue)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(Self.content.bytes(in: 0..<Self.content.size)))
        #expect(
            cache.requestLog.contains { $0.method == "GET" && $0.target == "/cache/file.bin" }, "the peer was asked")
        let options = try await fixture.result("aria2.getOption", [.string(gid)])
        #expect(options["cache-peers"] == .string(template))
    }

    @Test(
        "pause interrupts a running download and notifies; unpause resumes it to an identical file; each step is announced"
    )
    func pauseAndResume() async throws {
        let fixture = try Fixture(faults: [
            .throttle(bytesPerSecond: 256 << 10), .onlyFirst(requests: 3, .stall(afterBytes: 128 << 10)),
        ])
        defer { Task { await fixture.stop() } }
        var notifications = fixture.rpc.notifications().makeAsyncIterator()
        let gid = try #require(
            try await fixture.result("aria2.addUri", [.array([.string(fixture.server.url("/file.bin"))])]).stringValue)
        #expect(try Self.method(of: await notifications.next()) == ("aria2.onDownloadStart", gid))
        _ = try await fixture.waitForStatus(gid) { ($0["completedLength"]?.integerValue ?? 0) > 0 }
        #expect(try await fixture.result("aria2.pause", [.string(gid)]) == .string(gid))
        #expect(try Self.method(of: await notifications.next()) == ("aria2.onDownloadPause", gid))
        // Once its transfer has stopped (braid.state), its byte count is what it saved, what a resume keeps.
        let settled = try await fixture.waitForStatus(gid) { $0["braid"]?["state"] == .string("paused") }
        let manifest = try JSON(parsing: Array(try Data(contentsOf: fixture.directory.appending("file.bin.braid"))))
        let saved = manifest["segments"]?.arrayValue?.reduce(Int64(0)) { $0 + ($1["done"]?.integerValue ?? 0) }
        #expect(settled["completedLength"]?.integerValue == saved, "\(settled.text)")
        // The stalls kept it running until the pause; how many of its requests they took depends on timing, so none
        // is left for the resumed download, whose stalled request would wait out the 600 s stall timeout.
        fixture.server.setRoute(
            "/file.bin", .init(content: Self.content, faults: [.throttle(bytesPerSecond: 256 << 10)]))
        let paused = try await fixture.result("aria2.tellWaiting", [.integer(0), .integer(10)])
        #expect(paused.arrayValue?.first?["status"] == .string("paused"))
        #expect(
            Self.error(try await fixture.call("aria2.pause", [.string(gid)])).1 == "GID#\(gid) cannot be paused now")
        #expect(try await fixture.result("aria2.unpause", [.string(gid)]) == .string(gid))
        #expect(try Self.method(of: await notifications.next()) == ("aria2.onDownloadStart", gid))
        let status = try await fixture.waitForStatus(gid) { $0["status"] == .string("complete") }
        #expect(try Self.method(of: await notifications.next()) == ("aria2.onDownloadComplete", gid))
        let path = try #require(status["files"]?.arrayValue?.first?["path"]?.stringValue)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(Self.content.bytes(in: 0..<Self.content.size)))
    }

    @Test("the download changePosition or addUri's position puts first in the waiting queue is the next to start")
    func nextToStart() async throws {
        let fixture = try Fixture(faults: [.throttle(bytesPerSecond: 64 << 10)], maximumActive: 1)
        defer { Task { await fixture.stop() } }
        func add(_ name: String, _ position: Int? = nil) async throws -> String {
            let parameters: [JSON] = [
                .array([.string(fixture.server.url("/file.bin"))]), .object([("out", .string(name))]),
            ]
            return try #require(
                try await fixture.result("aria2.addUri", parameters + (position.map { [.integer(Int64($0))] } ?? []))
                    .stringValue)
        }
        let running = try await add("a.bin")
        _ = try await fixture.waitForStatus(running) { $0["status"] == .string("active") }
        let (b, c, d) = (try await add("b.bin"), try await add("c.bin"), try await add("d.bin"))
        #expect(
            try await fixture.result("aria2.changePosition", [.string(d), .integer(0), .string("POS_SET")])
                == .integer(0))
        let e = try await add("e.bin", 1)
        // The largest position a client can send is the end, for each of a Metalink's files too.
        let document = TestServer.metalinkDocument([
            .init(name: "f.bin", content: Self.content, urls: [fixture.server.url("/file.bin")]),
            .init(name: "g.bin", content: Self.content, urls: [fixture.server.url("/file.bin")]),
        ])
        let fg = try await fixture.result(
            "aria2.addMetalink",
            [.string(Data(document.bytes).base64EncodedString()), .object([]), .integer(Int64.max)])
        #expect(fg.arrayValue?.count == 2)
        for gid in fg.arrayValue ?? [] { #expect(try await fixture.result("aria2.remove", [gid]) == gid) }
        let waiting = try await fixture.result("aria2.tellWaiting", [.integer(0), .integer(10)])
        #expect(waiting.arrayValue?.compactMap { $0["gid"]?.stringValue } == [d, e, b, c])

        #expect(try await fixture.result("aria2.remove", [.string(running)]) == .string(running))
        _ = try await fixture.waitForStatus(d) { $0["status"] == .string("active") }
        for gid in [e, b, c] { #expect(try await fixture.status(gid)["status"] == .string("waiting")) }
        #expect(try await fixture.result("aria2.remove", [.string(d)]) == .string(d))
        _ = try await fixture.waitForStatus(e) { $0["status"] == .string("active") }
    }

    @Test("addMetalink queues a download per file, under its name made safe, held to its hashes and piece hashes")
    func addMetalink() async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        let url = fixture.server.url("/file.bin")
        // The server's bytes are not the second file's: its hash cannot match.
        let other = TestContent(seed: 78, size: Self.content.size)
        let document = TestServer.metalinkDocument([
            .init(
                name: "iso/one.bin", content: Self.content, urls: ["ftp://127.0.0.1/one.bin", url], pieceLength: 1 << 20
            ),
            .init(name: "two.bin", content: other, urls: [url]),
        ])
        let encoded = Data(document.bytes).base64EncodedString()
        let answer = try await fixture.result(
            "aria2.addMetalink", [.string(encoded), .object([("dir", .string("m")), ("out", .string("ignored.bin"))])])
        let gids = answer.arrayValue?.compactMap { $0.stringValue } ?? []
        #expect(gids.count == 2, "\(answer.text)")
        guard gids.count == 2 else { return }

        let one = try await fixture.waitForStatus(gids[0]) { $0["status"] == .string("complete") }
        let onePath = try #require(one["files"]?.arrayValue?.first?["path"]?.stringValue)
        #expect(onePath == fixture.directory.appending("m/iso/one.bin").path)
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: onePath)) == Data(Self.content.bytes(in: 0..<Self.content.size)))
        #expect(one["files"]?.arrayValue?.first?["uris"]?.arrayValue?.count == 1, "the ftp URL is left out")
        let verification = one["braid"]?["verification"]?.stringValue ?? ""
        #expect(verification.contains("sha-256") || verification.contains("SHA-256"), "\(verification)")

        let two = try await fixture.waitForStatus(gids[1]) { $0["status"] == .string("error") }
        #expect(two["errorCode"] == .string("32"), "\(two.text)")
        #expect(two["files"]?.arrayValue?.first?["path"]?.stringValue == fixture.directory.appending("m/two.bin").path)
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.appending("two.bin").path))
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.appending("m/ignored.bin").path))

        // A document that gives another size: refused by the size, before the file is fetched.
        let larger = TestServer.metalinkDocument([
            .init(name: "three.bin", content: TestContent(seed: 77, size: Self.content.size + 1), urls: [url])
        ])
        let three = try await fixture.result(
            "aria2.addMetalink", [.string(Data(larger.bytes).base64EncodedString()), .object([("dir", .string("m"))])])
        let threeGID = try #require(three.arrayValue?.first)
        let failed = try await fixture.waitForStatus(threeGID.stringValue ?? "") { $0["status"] == .string("error") }
        #expect(failed["errorCode"] == .string("32"), "\(failed.text)")
        #expect(failed["errorMessage"]?.stringValue?.contains("its Metalink gives") == true, "\(failed.text)")
    }

    @Test(
        "addMetalink refuses what is not a Metalink, or a file it cannot fetch, in one line, and queues nothing",
        arguments: [
            ("%%%", "The Metalink is not given as base64."),
            (Data("hello".utf8).base64EncodedString(), "Metalink"),
            (
                Data(#"<metalink xmlns="urn:ietf:params:xml:ns:metalink"></metalink>"#.utf8).base64EncodedString(),
                "the Metalink sent describes no <file>"
            ),
            (
                Data(
                    TestServer.metalinkDocument([.init(name: "a.bin", content: content, urls: ["ftp://127.0.0.1/a"])])
                        .bytes
                ).base64EncodedString(), "no http or https URL"
            ),
            (
                Data(
                    TestServer.metalinkDocument([
                        .init(name: "a.bin", content: content, urls: ["http://127.0.0.1:1/a"]),
                        .init(name: "a.bin", content: content, urls: ["http://127.0.0.1:1/b"]),
                    ]).bytes
                ).base64EncodedString(), "describes two files named 'a.bin'"
            ),
            (
                Data(
                    TestServer.metalinkDocument([
                        .init(name: "../a.bin", content: content, urls: ["http://127.0.0.1:1/a"])
                    ])
                    .bytes
                ).base64EncodedString(), "names a file by a path that has a '..' component"
            ),
        ]
    )
    func addMetalinkRefusals(document: String, message: String) async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        let response = try await fixture.call("aria2.addMetalink", [.string(document)])
        #expect(Self.error(response).0 == 1)
        #expect(Self.error(response).1?.contains(message) == true, "\(response.text)")
        let stat = try await fixture.result("aria2.getGlobalStat")
        #expect(stat["numActive"] == .string("0") && stat["numWaiting"] == .string("0"))
    }

    @Test("a removed download is listed as removed, keeps its partial file, and a 404 is an error with aria2's code 3")
    func removeAndError() async throws {
        let fixture = try Fixture(faults: [.throttle(bytesPerSecond: 64 << 10)])
        defer { Task { await fixture.stop() } }
        let gid = try #require(
            try await fixture.result("aria2.addUri", [.array([.string(fixture.server.url("/file.bin"))])]).stringValue)
        _ = try await fixture.waitForStatus(gid) { ($0["completedLength"]?.integerValue ?? 0) > 0 }
        #expect(try await fixture.result("aria2.remove", [.string(gid)]) == .string(gid))
        #expect(try await fixture.status(gid)["status"] == .string("removed"))
        let missing = try #require(
            try await fixture.result("aria2.addUri", [.array([.string(fixture.server.url("/none"))])]).stringValue)
        let failed = try await fixture.waitForStatus(missing) { $0["status"] == .string("error") }
        #expect(failed["errorCode"] == .string("3"), "\(failed.text)")
        #expect(Self.error(try await fixture.call("aria2.remove", [.string(missing)])).0 == 1)
        let stat = try await fixture.result("aria2.getGlobalStat")
        #expect(stat["numStopped"] == .string("2") && stat["numStoppedTotal"] == .string("2"))
    }

    @Test(
        "a new service with the same session lists every download in its state: paused stays paused, complete stays complete"
    )
    func sessionReadBack() async throws {
        let fixture = try Fixture(faults: [.throttle(bytesPerSecond: 64 << 10)], maximumActive: 1)
        defer { Task { await fixture.stop() } }
        let url = JSON.array([.string(fixture.server.url("/file.bin"))])
        let paused = try #require(
            try await fixture.result(
                "aria2.addUri", [url, .object([("pause", .string("true")), ("out", .string("p.bin"))])]
            ).stringValue)
        let waiting = try #require(
            try await fixture.result("aria2.addUri", [url, .object([("out", .string("w.bin"))])]).stringValue)
        let session = fixture.directory.appending(".braid-session").path
        await fixture.service.stop()
        let (service, rpc) = try Fixture.makeService(in: fixture.directory, session: session, maximumActive: 1)
        defer { Task { await service.stop() } }
        #expect(service.snapshot(paused)?.task.status == .paused)
        // The manager starts it as soon as it is read back, and the service hears so from its events.
        try await Polling.until("the waiting download to be active again", timeout: .seconds(30)) {
            service.snapshot(waiting)?.task.status == .active
        }
        #expect(service.snapshot(paused)?.task.status == .paused)
        #expect(service.snapshot(waiting)?.task.request.output == "w.bin")
        _ = rpc
    }

    @Test(
        "a download the session still lists as active, whose file was finished before a crash, is checked, not fetched again"
    )
    func finishedBeforeCrash() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-daemon-crash")
        let server = TestServer(routes: ["/file.bin": .init(content: Self.content)])
        try server.start()
        defer {
            server.shutdown()
            directory.remove()
        }
        let path = directory.appending("file.bin").path
        try Data(Self.content.bytes(in: 0..<Self.content.size)).write(to: URL(fileURLWithPath: path))
        var task = DaemonTask(
            gid: "00000000000000a1",
            request: TaskRequest(uris: [server.url("/file.bin")], directory: directory.url.path),
            status: .active
        )
        task.path = path
        let session = directory.appending(".braid-session").path
        try SessionStore(path: session).save { [task] }
        let (service, _) = try Fixture.makeService(in: directory, session: session, maximumActive: 1)
        let deadline = ContinuousClock.now + .seconds(90)
        while service.snapshot(task.gid)?.task.status != .complete, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        await service.stop()
        #expect(service.snapshot(task.gid)?.task.status == .complete)
        #expect(server.requestLog.allSatisfy { $0.range == nil || $0.method == "HEAD" }, "\(server.requestLog)")
        #expect(server.totalBodyBytesSent < 64 << 10, "nothing but a probe was sent")
    }

    @Test("a session file that is not Braid's is refused, and left as it was")
    func foreignSession() throws {
        let directory = try TemporaryDirectory(prefix: "braid-daemon-session")
        defer { directory.remove() }
        let path = directory.appending("session").path
        try Data("gid=1\nhttp://example/a\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: BraidError.self) { try SessionStore(path: path).load() }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("gid=1\nhttp://example/a\n".utf8))
    }

    @Test("tellWaiting and tellStopped page as aria2 does, a negative offset counting back from the end")
    func paging() {
        let all = Array(0..<10)
        #expect(Aria2RPC.page(all, offset: 0, count: 3) == [0, 1, 2])
        #expect(Aria2RPC.page(all, offset: 8, count: 5) == [8, 9])
        #expect(Aria2RPC.page(all, offset: -1, count: 3) == [9, 8, 7])
        #expect(Aria2RPC.page(all, offset: 10, count: 3) == [])
        #expect(Aria2RPC.page(all, offset: -11, count: 3) == [])
        #expect(Aria2RPC.page(all, offset: 0, count: 0) == [])
    }

    static func method(of notification: [UInt8]?) throws -> (String?, String?) {
        let value = try JSON(parsing: try #require(notification))
        return (value["method"]?.stringValue, value["params"]?.arrayValue?.first?["gid"]?.stringValue)
    }
}
