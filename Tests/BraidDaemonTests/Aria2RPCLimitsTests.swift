import Braid
import BraidJSON
import BraidTestSupport
import Foundation
import Testing

@testable import BraidDaemon

/// What a request may cost the RPC layer: the token first, before any other work; batches, multicalls and
/// answers capped; ids kept to what JSON-RPC allows. Called in process, on a service that runs no transfer.
@Suite("aria2 RPC limits")
struct Aria2RPCLimitsTests {
    /// A service and RPC over an empty directory, with `limits`.
    final class Fixture: Sendable {
        let directory: TemporaryDirectory
        let service: DaemonService
        let rpc: Aria2RPC

        init(limits: JSONRPC.Limits = .init()) async throws {
            directory = try TemporaryDirectory(prefix: "braid-daemon-limits")
            let root = try DownloadDirectory(directory.url.path)
            service = DaemonService(
                configuration: .init(directory: root.root, sessionPath: directory.appending(".braid-session").path))
            try service.start()
            // Stopped: the table still answers, but no transfer ever starts.
            await service.stop()
            rpc = Aria2RPC(service: service, directory: root, secret: "s3cret", limits: limits)
        }

        func respond(_ text: String) async throws -> (JSON, bytes: Int) {
            let body = try #require(await rpc.respond(to: Array(text.utf8)).body)
            return (try JSON(parsing: body), body.count)
        }

        deinit { directory.remove() }
    }

    static func call(_ method: String, id: String = "1", _ params: String) -> String {
        #"{"jsonrpc":"2.0","id":"# + id + #","method":""# + method + #"","params":["# + params + "]}"
    }

    @Test(
        "A call without the token is refused before its parameters are read: nested past any limit, still Unauthorized")
    func tokenFirst() async throws {
        let fixture = try await Fixture()
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        let (refused, _) = try await fixture.respond(Self.call("aria2.addUri", #"["http://127.0.0.1:1/"],"# + deep))
        #expect(refused["error"]?["message"] == .string("Unauthorized"), "\(refused.text)")
        let (read, _) = try await fixture.respond(
            Self.call("aria2.addUri", #""token:s3cret",["http://127.0.0.1:1/"],"# + deep))
        #expect(read["error"]?["code"] == .integer(-32600), "\(read.text)")
        #expect(fixture.service.waiting().isEmpty)
    }

    @Test("A 2 MiB batch of calls without the token is answered in a few dozen bytes a call")
    func unauthorisedBatch() async throws {
        let fixture = try await Fixture()
        let padding = String(repeating: "x", count: 2100)
        let one = Self.call("aria2.addUri", #"["http://127.0.0.1:1/"],{"out":""# + padding + #""}"#)
        let batch = "[" + Array(repeating: one, count: 1000).joined(separator: ",") + "]"
        #expect(batch.utf8.count > 2 << 20)
        let (answer, bytes) = try await fixture.respond(batch)
        #expect(answer.arrayValue?.count == 1000)
        #expect(bytes < 80 * 1000, "\(bytes) bytes")
        #expect(fixture.service.waiting().isEmpty)
    }

    @Test("A batch of more than 1,000 calls is answered with one error, none of its calls run")
    func batchCap() async throws {
        let fixture = try await Fixture()
        let one = Self.call("aria2.addUri", #""token:s3cret",["http://127.0.0.1:1/"],{"pause":"true"}"#)
        let (answer, _) = try await fixture.respond(
            "[" + Array(repeating: one, count: 1001).joined(separator: ",") + "]")
        #expect(answer["error"]?["code"] == .integer(-32600), "\(answer.text.prefix(300))")
        #expect(fixture.service.waiting().isEmpty)
        let (allowed, _) = try await fixture.respond("[" + Array(repeating: one, count: 3).joined(separator: ",") + "]")
        #expect(allowed.arrayValue?.count == 3)
        #expect(fixture.service.waiting().count == 3)
    }

    @Test("A system.multicall of more than 1,000 calls is one error")
    func multicallCap() async throws {
        let fixture = try await Fixture()
        let calls = Array(repeating: #"{"methodName":"system.listNotifications"}"#, count: 1001)
        let (answer, _) = try await fixture.respond(
            Self.call("system.multicall", "[" + calls.joined(separator: ",") + "]"))
        #expect(
            answer["error"]?["message"]?.stringValue?.contains("at most 1000") == true, "\(answer.text.prefix(300))")
    }

    @Test("An answer that would pass the size cap is one error, in a call, a multicall and a batch")
    func answerCap() async throws {
        let fixture = try await Fixture(limits: .init(maximumResponseBytes: 16 << 10))
        let calls = Array(repeating: #"{"methodName":"system.listMethods"}"#, count: 100)
        let multicall = Self.call("system.multicall", "[" + calls.joined(separator: ",") + "]")
        let (answer, bytes) = try await fixture.respond(multicall)
        #expect(answer["error"]?["message"]?.stringValue?.contains("larger than 16384 bytes") == true)
        #expect(bytes < 1024)
        let listMethods = Self.call("system.listMethods", "")
        let (batch, batchBytes) = try await fixture.respond(
            "[" + Array(repeating: listMethods, count: 100).joined(separator: ",") + "]")
        #expect(batch["error"]?["message"]?.stringValue?.contains("larger than") == true)
        #expect(batchBytes < 1024)
        let (small, _) = try await fixture.respond(listMethods)
        #expect(small["result"]?.arrayValue?.isEmpty == false)
    }

    @Test(
        "An id that is not null, a number or a string of at most 256 bytes makes the call invalid, and is not echoed",
        arguments: [#"{"a":[1,2,3]}"#, "[1]", "true", "\"" + String(repeating: "i", count: 257) + "\""]
    )
    func ids(_ id: String) async throws {
        let fixture = try await Fixture()
        let (answer, _) = try await fixture.respond(Self.call("system.listMethods", id: id, ""))
        #expect(answer["error"]?["code"] == .integer(-32600))
        #expect(answer["id"] == .null)
    }
}
