import BraidDaemon
import NIOConcurrencyHelpers

/// A stand-in for the daemon's service: answers every request with the request itself inside a JSON-RPC result,
/// records what it was asked, and lets the test push notifications to every WebSocket client.
///
/// A request without `"id"` is treated as a JSON-RPC notification and answered with nothing. With a secret, a request
/// whose text holds `"token:SECRET"` counts as having shown it.
final class EchoEndpoint: RPCEndpoint {
    private let secret: String?
    /// How long each answer takes, as a slow method's would.
    private let delay: Duration
    private let requests = NIOLockedValueBox<[String]>([])
    private let subscribers = NIOLockedValueBox<[Int: AsyncStream<[UInt8]>.Continuation]>([:])
    private let nextSubscriber = NIOLockedValueBox(0)

    /// The request bodies received, in arrival order, as text.
    var received: [String] { requests.withLockedValue { $0 } }

    /// How many notification streams are open (one per connected WebSocket client).
    var subscriberCount: Int { subscribers.withLockedValue { $0.count } }

    init(secret: String? = nil, delay: Duration = .zero) {
        self.secret = secret
        self.delay = delay
    }

    var requiresSecret: Bool { secret != nil }

    func isSecret(_ token: String) -> Bool { secret != nil && token == secret }

    func respond(to body: [UInt8]) async -> RPCResponse {
        let text = String(decoding: body, as: UTF8.self)
        requests.withLockedValue { $0.append(text) }
        if delay > .zero { try? await Task.sleep(for: delay) }
        guard text.contains("\"id\"") else { return RPCResponse(body: nil) }
        let showedSecret = secret.map { text.contains("\"token:\($0)\"") } ?? false
        return RPCResponse(
            body: Array(#"{"jsonrpc":"2.0","result":"#.utf8) + body + Array("}".utf8), showedSecret: showedSecret)
    }

    func notifications() -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        let key = nextSubscriber.withLockedValue { next in
            defer { next += 1 }
            return next
        }
        continuation.onTermination = { [subscribers] _ in
            _ = subscribers.withLockedValue { $0.removeValue(forKey: key) }
        }
        subscribers.withLockedValue { $0[key] = continuation }
        return stream
    }

    /// Sends `text` to every open notification stream.
    func push(_ text: String) {
        for continuation in subscribers.withLockedValue({ Array($0.values) }) {
            continuation.yield(Array(text.utf8))
        }
    }
}
