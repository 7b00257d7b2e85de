import Braid
import BraidJSON
import BraidTestSupport
import Foundation
import Testing

@testable import BraidDaemon

/// The RPC layer fed a seeded corpus of valid aria2 calls, mutated: bytes flipped, cut short, spliced, invalid
/// UTF-8 put in, nesting bombs, huge numbers, deep parameters, long strings, oversized batches. Whatever comes in,
/// the layer answers (no crash), soon (no hang), with JSON no larger than the cap, and memory stays bounded.
///
/// The seed is fixed, so a failure names an input that can be made again: `Mutator(seed:)` at that iteration.
@Suite("JSON-RPC fuzz")
struct JSONRPCFuzzTests {
    static let seed: UInt64 = 0x2026
    static let iterations = 3000

    /// Calls as aria2p, AriaNg and the daemon's page send them, with the token.
    static let corpus: [String] = [
        #"{"jsonrpc":"2.0","id":"1","method":"aria2.addUri","params":["token:s3cret",["http://127.0.0.1:1/a.iso"],{"out":"a.iso","dir":"sub","split":"4","max-connection-per-server":"2","checksum":"sha-256=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","header":["X-A: 1"],"pause":"true","max-download-limit":"1M"}]}"#,
        #"{"jsonrpc":"2.0","id":2,"method":"aria2.tellActive","params":["token:s3cret",["gid","status","totalLength","completedLength"]]}"#,
        #"{"jsonrpc":"2.0","id":3,"method":"aria2.tellWaiting","params":["token:s3cret",0,1000,["gid","files"]]}"#,
        #"{"jsonrpc":"2.0","id":4,"method":"aria2.tellStopped","params":["token:s3cret",-1,10]}"#,
        #"{"jsonrpc":"2.0","id":5,"method":"aria2.tellStatus","params":["token:s3cret","2089b05ecca3d829",["gid"]]}"#,
        #"{"jsonrpc":"2.0","id":6,"method":"aria2.changeGlobalOption","params":["token:s3cret",{"max-overall-download-limit":"10M","max-concurrent-downloads":"3"}]}"#,
        #"{"jsonrpc":"2.0","id":7,"method":"aria2.changeOption","params":["token:s3cret","2089b05ecca3d829",{"max-download-limit":"0"}]}"#,
        #"{"jsonrpc":"2.0","id":8,"method":"aria2.getGlobalStat","params":["token:s3cret"]}"#,
        #"{"jsonrpc":"2.0","id":9,"method":"aria2.pause","params":["token:s3cret","2089b05ecca3d829"]}"#,
        #"{"jsonrpc":"2.0","id":10,"method":"aria2.getVersion","params":["token:wrong"]}"#,
        #"{"jsonrpc":"2.0","id":"m","method":"system.multicall","params":[[{"methodName":"aria2.getGlobalStat","params":["token:s3cret"]},{"methodName":"aria2.tellActive","params":["token:s3cret"]},{"methodName":"system.listMethods"}]]}"#,
        #"[{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion","params":["token:s3cret"]},{"jsonrpc":"2.0","id":2,"method":"aria2.purgeDownloadResult","params":["token:s3cret"]}]"#,
        #"{"jsonrpc":"2.0","id":null,"method":"system.listNotifications"}"#,
        #"{"jsonrpc":"2.0","id":11,"method":"aria2.addUri","params":["token:s3cret",["http://127.0.0.1:1/b"],{"pause":"true"},3]}"#,
        #"{"jsonrpc":"2.0","id":12,"method":"aria2.changePosition","params":["token:s3cret","2089b0",-2,"POS_CUR"]}"#,
        #"{"jsonrpc":"2.0","id":13,"method":"aria2.addMetalink","params":["token:s3cret","PD94bWwgdmVyc2lvbj0iMS4wIiBlbmNvZGluZz0iVVRGLTgiPz48bWV0YWxpbmsgeG1sbnM9InVybjppZXRmOnBhcmFtczp4bWw6bnM6bWV0YWxpbmsiPjxmaWxlIG5hbWU9ImQvYS5pc28iPjxzaXplPjM8L3NpemU+PGhhc2ggdHlwZT0ic2hhLTI1NiI+OWY4NmQwODE4ODRjN2Q2NTlhMmZlYWEwYzU1YWQwMTVhM2JmNGYxYjJiMGI4MjJjZDE1ZDZjMTViMGYwMGEwODwvaGFzaD48cGllY2VzIGxlbmd0aD0iMSIgdHlwZT0ic2hhLTEiPjxoYXNoPmE5NGE4ZmU1Y2NiMTliYTYxYzRjMDg3M2QzOTFlOTg3OTgyZmJiZDM8L2hhc2g+PGhhc2g+YTk0YThmZTVjY2IxOWJhNjFjNGMwODczZDM5MWU5ODc5ODJmYmJkMzwvaGFzaD48aGFzaD5hOTRhOGZlNWNjYjE5YmE2MWM0YzA4NzNkMzkxZTk4Nzk4MmZiYmQzPC9oYXNoPjwvcGllY2VzPjx1cmwgcHJpb3JpdHk9IjEiPmh0dHA6Ly8xMjcuMC4wLjE6MS9hLmlzbzwvdXJsPjwvZmlsZT48ZmlsZSBuYW1lPSJiLmlzbyI+PHVybD5odHRwOi8vMTI3LjAuMC4xOjEvYi5pc288L3VybD48L2ZpbGU+PC9tZXRhbGluaz4=",{"pause":"true","dir":"m"},0]}"#,
    ]

    @Test("seeded mutations of aria2 calls: answered, soon, as JSON within the cap, in bounded memory")
    func fuzz() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-daemon-fuzz")
        defer { directory.remove() }
        let root = try DownloadDirectory(directory.url.path)
        // No session file (nothing to sync), and stopped: the table answers, no transfer ever starts.
        let service = DaemonService(configuration: .init(directory: root.root, sessionPath: nil))
        try service.start()
        await service.stop()
        let limits = JSONRPC.Limits()
        let rpc = Aria2RPC(service: service, directory: root, secret: "s3cret", limits: limits)

        let peakBefore = try ProcessFigures.peakResidentBytes(getpid())
        var answering = Duration.zero
        var mutator = Mutator(seed: Self.seed)
        var slowest = Duration.zero
        for iteration in 0..<Self.iterations {
            let input = mutator.mutate(Array(Self.corpus[mutator.next(below: Self.corpus.count)].utf8))
            let began = ContinuousClock.now
            let response = await rpc.respond(to: input)
            let took = ContinuousClock.now - began
            // The calls never suspend: without a yield the loop would hold one of the two threads every test's
            // tasks run on for seconds, and other tests' servers (their endpoints are tasks) would stop answering.
            await Task.yield()
            slowest = max(slowest, took)
            answering += took
            let context =
                "iteration \(iteration) of seed \(Self.seed): \(String(decoding: input.prefix(300), as: UTF8.self))"
            #expect(took < .seconds(2), "\(took) for \(context)")
            guard let body = response.body else { continue }
            #expect(body.count <= limits.maximumResponseBytes, "\(body.count) bytes for \(context)")
            #expect((try? JSON(parsing: body)) != nil, "not JSON for \(context)")
        }
        let growth = try ProcessFigures.peakResidentBytes(getpid()) - peakBefore
        // The time in the calls alone: the yields between them let other tests run for as long as they need.
        #expect(answering < .seconds(20), "\(Self.iterations) inputs took \(answering); the slowest \(slowest)")
        #expect(growth < 256 << 20, "the peak resident size grew by \(growth >> 20) MiB")
    }

    /// Seeded mutations (SplitMix64): each input is one valid call changed in one of a dozen hostile ways.
    struct Mutator {
        private var random: SplitMix64

        init(seed: UInt64) { random = SplitMix64(seed: seed) }

        mutating func next() -> UInt64 { random.next() }

        mutating func next(below bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }

        mutating func mutate(_ call: [UInt8]) -> [UInt8] {
            var bytes = call
            switch next(below: 12) {
            case 0, 1:  // flip a few bits
                for _ in 0...next(below: 4) { bytes[next(below: bytes.count)] ^= UInt8(1 << next(below: 8)) }
            case 2:  // cut short
                bytes = Array(bytes.prefix(next(below: bytes.count)))
            case 3:  // random bytes put in
                let at = next(below: bytes.count)
                bytes.insert(contentsOf: (0...next(below: 16)).map { _ in UInt8(truncatingIfNeeded: next()) }, at: at)
            case 4:  // invalid UTF-8 inside a string: overlong, a surrogate, a lone continuation, 0xFF
                let bad: [[UInt8]] = [[0xC0, 0xAF], [0xED, 0xA0, 0x80], [0x80], [0xFF], [0xF4, 0x90, 0x80, 0x80]]
                let quote = bytes.indices.filter { bytes[$0] == UInt8(ascii: "\"") }
                bytes.insert(contentsOf: bad[next(below: bad.count)], at: quote[next(below: quote.count)] + 1)
            case 5:  // a nesting bomb around the call or in its params
                let depth = [33, 600, 100_000][next(below: 3)]
                bytes =
                    Array(repeating: UInt8(ascii: "["), count: depth) + bytes
                    + Array(repeating: UInt8(ascii: "]"), count: next(below: 2) == 0 ? depth : depth / 2)
            case 6:  // huge numbers where numbers or strings go
                let huge = ["1e999999", String(repeating: "9", count: 400), "-0.0000e-99999", "18446744073709551616"]
                bytes = replacingFirst(UInt8(ascii: ","), in: bytes, with: "," + huge[next(below: huge.count)] + ",")
            case 7:  // deep arrays as parameters
                let depth = [20, 40, 500][next(below: 3)]
                let deep = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
                bytes = replacingFirst(UInt8(ascii: "["), in: bytes, with: "[" + deep + ",")
            case 8:  // a long string
                let long = "\"" + String(repeating: "x", count: [1 << 10, 1 << 20][next(below: 2)]) + "\","
                bytes = replacingFirst(UInt8(ascii: "["), in: bytes, with: "[" + long)
            case 9:  // an oversized or empty batch
                let count = [0, 1001, 5000][next(below: 3)]
                bytes = Array(
                    ("["
                        + Array(repeating: String(decoding: bytes, as: UTF8.self), count: count)
                        .joined(separator: ",") + "]").utf8)
            case 10:  // spliced with another part of itself
                let from = next(below: bytes.count)
                let to = next(below: bytes.count)
                bytes =
                    Array(bytes[..<min(from, to)]) + Array(bytes[max(from, to)...])
                    + Array(bytes[min(from, to)..<max(from, to)])
            default:  // bytes deleted here and there
                for _ in 0...next(below: 8) where !bytes.isEmpty { bytes.remove(at: next(below: bytes.count)) }
            }
            return bytes
        }

        private func replacingFirst(_ byte: UInt8, in bytes: [UInt8], with text: String) -> [UInt8] {
            guard let index = bytes.firstIndex(of: byte) else { return bytes }
            return Array(bytes[..<index]) + Array(text.utf8) + Array(bytes[(index + 1)...])
        }
    }
}
