import BraidTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A real WebSocket client (NIO's client upgrader) for the server's tests: frames it receives are collected as
/// they arrive, and the test waits for the n-th one, or for the end, against a deadline.
final class WebSocketTestClient: Sendable {
    private enum Upgrade: Sendable {
        case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    private let channel: any Channel
    private let frames = NIOLockedValueBox<[WebSocketFrame]>([])
    private let ended = NIOLockedValueBox(false)
    private let reader: Task<Void, Never>

    private init(_ asyncChannel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>) {
        let frames = self.frames
        let ended = self.ended
        channel = asyncChannel.channel
        reader = Task {
            try? await asyncChannel.executeThenClose { inbound, _ in
                for try await frame in inbound {
                    frames.withLockedValue { $0.append(frame) }
                }
            }
            ended.withLockedValue { $0 = true }
        }
    }

    /// Connects to `host:port`, asks for a WebSocket at `path` with `extraHeaders` beside `Host`, and returns once the
    /// upgrade is done.
    static func connect(
        host: String,
        port: Int,
        path: String = "/jsonrpc",
        extraHeaders: [(String, String)] = []
    ) async throws -> WebSocketTestClient {
        let upgrade: EventLoopFuture<Upgrade> = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(
                        maxFrameSize: 1 << 24,
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                .webSocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                            }
                        }
                    )
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: "\(host):\(port)")
                    headers.add(contentsOf: extraHeaders)
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration(
                        upgradeRequestHead: HTTPRequestHead(
                            version: .http1_1, method: .GET, uri: path, headers: headers),
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in
                            channel.eventLoop.makeCompletedFuture { Upgrade.refused }
                        }
                    )
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: .init(upgradeConfiguration: configuration)
                    )
                }
            }
        switch try await upgrade.get() {
        case .webSocket(let channel):
            return WebSocketTestClient(channel)
        case .refused:
            throw TestSupportError.timedOut("a WebSocket upgrade at \(path)", after: .zero, evidence: "refused")
        }
    }

    /// Sends one frame, masked as a client must.
    func send(_ opcode: WebSocketOpcode, _ text: String, fin: Bool = true) async throws {
        let frame = WebSocketFrame(fin: fin, opcode: opcode, maskKey: .random(), data: ByteBuffer(string: text))
        try await channel.writeAndFlush(frame).get()
    }

    /// Sends a close frame with `code`.
    func sendClose(code: WebSocketErrorCode = .normalClosure) async throws {
        var data = ByteBuffer()
        data.write(webSocketErrorCode: code)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data)
        try await channel.writeAndFlush(frame).get()
    }

    /// Every frame received so far.
    var received: [WebSocketFrame] { frames.withLockedValue { $0 } }

    /// The frame at `index` (0 is the first received), once it has arrived.
    func frame(_ index: Int, timeout: Duration = Polling.patience) async throws -> WebSocketFrame {
        try await Polling.until("WebSocket frame #\(index)", timeout: timeout) { received.count > index }
        return received[index]
    }

    /// The text of the frame at `index`.
    func text(_ index: Int, timeout: Duration = Polling.patience) async throws -> String {
        String(buffer: try await frame(index, timeout: timeout).data)
    }

    /// Waits until the server has closed the connection.
    func waitUntilClosed(timeout: Duration = Polling.patience) async throws {
        try await Polling.until("the server to close the WebSocket", timeout: timeout) {
            ended.withLockedValue { $0 }
        }
    }

    /// Closes the connection without a close handshake, and waits for the reader to finish.
    func close() async {
        channel.close(promise: nil)
        await reader.value
    }
}
