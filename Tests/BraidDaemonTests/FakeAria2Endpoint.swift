import BraidDaemon
import Foundation
import NIOConcurrencyHelpers

/// Just enough of aria2 for the page to draw: `system.multicall` answers one active download with Braid's segment
/// map and one completed download; every call is recorded with its parameters.
final class FakeAria2Endpoint: RPCEndpoint {
    /// Each call's method and its first parameter when that is a string.
    private let calls = NIOLockedValueBox<[(method: String, first: String?)]>([])

    /// The method names called so far, inner calls of `system.multicall` included, in order.
    var methods: [String] { calls.withLockedValue { $0.map(\.method) } }

    /// The first parameter of every call whose first parameter is a string.
    var firstParameters: [String] { calls.withLockedValue { $0.compactMap(\.first) } }

    static var active: [String: Any] {
        [
            "gid": "2089b05ecca3d829", "status": "active", "totalLength": "1000", "completedLength": "400",
            "downloadSpeed": "2048", "connections": "2", "dir": "/downloads",
            "files": [
                [
                    "index": "1", "path": "/downloads/ubuntu<b>.iso", "length": "1000", "completedLength": "400",
                    "selected": "true", "uris": [["uri": "http://mirror.example/ubuntu.iso", "status": "used"]],
                ]
            ],
            "braid": [
                "state": "downloading", "verification": NSNull(), "etaSeconds": 3,
                "segments": [
                    ["start": 0, "end": 500, "done": 300, "active": true],
                    ["start": 500, "end": 1000, "done": 100, "active": false],
                ],
            ],
        ]
    }

    static var complete: [String: Any] {
        [
            "gid": "d270c8a2cb6b4f2c", "status": "complete", "totalLength": "10", "completedLength": "10",
            "downloadSpeed": "0",
            "files": [["index": "1", "path": "", "uris": [["uri": "http://x.example/a/notes.txt"]]]],
        ]
    }

    var requiresSecret: Bool { false }

    func isSecret(_ token: String) -> Bool { false }

    func respond(to body: [UInt8]) async -> RPCResponse {
        guard let request = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let method = request["method"] as? String
        else { return RPCResponse(body: nil) }
        let params = request["params"] as? [Any] ?? []
        calls.withLockedValue { $0.append((method, params.first as? String)) }
        let result: Any
        switch method {
        case "system.multicall":
            let inner = (params.first as? [[String: Any]]) ?? []
            calls.withLockedValue { calls in
                for call in inner {
                    let first = (call["params"] as? [Any])?.first as? String
                    calls.append((call["methodName"] as? String ?? "", first))
                }
            }
            result = [
                [[Self.active]], [[Any]()], [[Self.complete]],
                [["downloadSpeed": "2048", "numActive": "1", "numWaiting": "0", "numStopped": "1"]],
            ]
        case "aria2.addUri":
            result = "0000000000000001"
        default:
            result = "OK"
        }
        let response: [String: Any] = ["jsonrpc": "2.0", "id": request["id"] ?? NSNull(), "result": result]
        return RPCResponse(body: (try? JSONSerialization.data(withJSONObject: response)).map { Array($0) })
    }

    func notifications() -> AsyncStream<[UInt8]> {
        AsyncStream { _ in }
    }
}
