import Braid
import BraidJSON
import BraidTestServer
import BraidTestSupport
import Foundation
import NIOCore
import NIOWebSocket
import Synchronization
import Testing

@testable import BraidDaemon

/// Every notification reaches every client that reads: none dropped for a burst, in order; a client that falls
/// `NotificationHub.maximumBytes` behind is cut off (its stream ends) rather than sent some and not others.
@Suite("notifications")
struct NotificationTests {
    static func message(_ number: Int, padding: Int = 0) -> [UInt8] {
        Array(#"{"n":\#(number),"pad":"\#(String(repeating: "x", count: padding))"}"#.utf8)
    }

    @Test("a burst of ten thousand notifications before the client reads reaches it whole and in order")
    func burstKeptWhole() async {
        let hub = NotificationHub()
        let stream = hub.subscribe()
        for number in 0..<10_000 { hub.publish(Self.message(number)) }
        hub.finish()
        var received: [[UInt8]] = []
        for await message in stream { received.append(message) }
        #expect(received == (0..<10_000).map { Self.message($0) })
    }

    @Test("a client that falls maximumBytes behind is cut off, told so by the end of its stream; the hub goes on")
    func laggardCutOff() async {
        let cuts = Mutex(0)
        let hub = NotificationHub { cuts.withLock { $0 += 1 } }
        let laggard = hub.subscribe()
        let padding = 1000
        let count = NotificationHub.maximumBytes / (padding + NotificationHub.overhead) + 1
        for number in 0..<count { hub.publish(Self.message(number, padding: padding)) }
        #expect(cuts.withLock { $0 } == 1)
        var laggardReceived = 0
        for await _ in laggard { laggardReceived += 1 }
        #expect(laggardReceived == 0, "its queue is dropped with it, not delivered with a gap")
        let next = hub.subscribe()
        hub.publish(Self.message(-1))
        hub.finish()
        var received: [[UInt8]] = []
        for await message in next { received.append(message) }
        #expect(received == [Self.message(-1)])
        #expect(cuts.withLock { $0 } == 1)
    }

    @Test("past the overall limit the client furthest behind is cut off; a client that reads keeps every notification")
    func overallLimit() async {
        let cuts = Mutex(0)
        // Each message is 100 bytes and counts 164: two clients that never read pass 1,900 at the sixth.
        let hub = NotificationHub(maximumBytes: 1000, maximumTotalBytes: 1900) { cuts.withLock { $0 += 1 } }
        let silent = [hub.subscribe(), hub.subscribe()]
        var reader = hub.subscribe().makeAsyncIterator()
        let message = Array(repeating: UInt8(ascii: "x"), count: 100)
        for number in 1...6 {
            hub.publish(message)
            #expect(await reader.next() == message, "message \(number) to the reading client")
            #expect(cuts.withLock { $0 } == (number < 6 ? 0 : 1), "after message \(number)")
        }
        #expect(hub.heldBytes == 6 * 164, "one silent client's six are held, the other's dropped")
        hub.finish()
        var counts: [Int] = []
        for stream in silent {
            var count = 0
            for await _ in stream { count += 1 }
            counts.append(count)
        }
        #expect(counts.sorted() == [0, 6])
        #expect(await reader.next() == nil)
        #expect(hub.heldBytes == 0)
    }

    @Test(
        "a WebSocket client subscribed while a multicall adds 1,000 downloads gets exactly one start and one complete for each",
        .timeLimit(.minutes(5)))
    func thousandDownloads() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-daemon-notify")
        defer { directory.remove() }
        let files = TestServer(routes: ["/small.bin": .init(size: 2048, seed: 5)])
        try files.start()
        defer { files.shutdown() }
        var options = DownloadOptions()
        options.syncOnCompletion = false
        let root = try DownloadDirectory(directory.url.path)
        let service = DaemonService(
            configuration: .init(
                directory: root.root, sessionPath: root.root + "/.braid-session",
                limits: .init(concurrentDownloads: .fixed(20)), baseOptions: options))
        try service.start()
        let rpc = Aria2RPC(service: service, directory: root, secret: "s3cret")
        let server = DaemonServer(configuration: .init(host: "127.0.0.1", port: 0), endpoint: rpc)
        let (host, port) = try await server.start()
        let client = try await WebSocketTestClient.connect(host: host, port: port, path: "/jsonrpc?token=s3cret")
        do {
            // Answered only after the socket subscribed (it subscribes before it reads anything).
            try await client.send(.text, #"{"jsonrpc":"2.0","id":"v","method":"system.listMethods"}"#)
            _ = try await client.frame(0)
            let calls = (0..<1000).map { number in
                JSON.object([
                    ("methodName", .string("aria2.addUri")),
                    (
                        "params",
                        .array([
                            .string("token:s3cret"), .array([.string(files.url("/small.bin"))]),
                            .object([("out", .string("f\(number).bin"))]),
                        ])
                    ),
                ])
            }
            let request = JSON.object([
                ("jsonrpc", .string("2.0")), ("id", .string("m")), ("method", .string("system.multicall")),
                ("params", .array([.array(calls)])),
            ])
            let answer = try JSON(parsing: try #require(await rpc.respond(to: request.bytes).body))
            let gids = try #require(answer["result"]?.arrayValue).compactMap { $0.arrayValue?.first?.stringValue }
            #expect(gids.count == 1000)

            var methods: [String: [String]] = [:]
            try await Polling.until("2,000 notifications", timeout: .seconds(240)) {
                methods = [:]
                for frame in client.received.dropFirst() {
                    guard let notification = try? JSON(parsing: Array(frame.data.readableBytesView)),
                        let method = notification["method"]?.stringValue,
                        let gid = notification["params"]?.arrayValue?.first?["gid"]?.stringValue
                    else { continue }
                    methods[gid, default: []].append(method)
                }
                return methods.values.reduce(0) { $0 + $1.count } >= 2000
            }
            #expect(gids.allSatisfy { methods[$0] == ["aria2.onDownloadStart", "aria2.onDownloadComplete"] })
            #expect(methods.count == 1000)
        } catch {
            await client.close()
            await server.stop()
            await service.stop()
            throw error
        }
        await client.close()
        await server.stop()
        await service.stop()
    }
}
