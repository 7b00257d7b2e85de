import BraidTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A plain TCP client for what `curl` will not send: malformed requests, pipelined requests in one write, a
/// connection that says nothing. Bytes it receives are collected until the server closes.
final class RawTCPClient: Sendable {
    private let channel: any Channel
    private let bytes = NIOLockedValueBox<[UInt8]>([])
    private let ended = NIOLockedValueBox(false)
    private let reader: Task<Void, Never>

    init(host: String, port: Int) async throws {
        let asyncChannel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        channel = asyncChannel.channel
        let bytes = self.bytes
        let ended = self.ended
        reader = Task {
            try? await asyncChannel.executeThenClose { inbound, _ in
                for try await chunk in inbound {
                    bytes.withLockedValue { $0 += Array(chunk.readableBytesView) }
                }
            }
            ended.withLockedValue { $0 = true }
        }
    }

    /// Writes `text` as it is.
    func send(_ text: String) async throws {
        try await channel.writeAndFlush(ByteBuffer(string: text)).get()
    }

    /// What the server has sent so far, as text.
    var received: String { String(decoding: bytes.withLockedValue { $0 }, as: UTF8.self) }

    /// Waits until the server has closed the connection and returns everything it sent.
    func receiveUntilClosed(timeout: Duration = Polling.patience) async throws -> String {
        try await Polling.until("the server to close the connection", timeout: timeout, evidence: { received }) {
            ended.withLockedValue { $0 }
        }
        return received
    }

    /// Waits until what the server sent contains `text` `count` times.
    func waitUntilReceived(_ text: String, count: Int = 1, timeout: Duration = Polling.patience) async throws {
        try await Polling.until("\(count)× \"\(text)\" from the server", timeout: timeout, evidence: { received }) {
            received.components(separatedBy: text).count - 1 >= count
        }
    }

    /// Closes the connection and waits for the reader to finish.
    func close() async {
        channel.close(promise: nil)
        await reader.value
    }
}
