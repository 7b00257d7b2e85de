import NIOCore
import NIOWebSocket

/// Serves one WebSocket at `/jsonrpc`: each text message is a JSON-RPC request or batch answered with one text
/// message, and the endpoint's notifications are sent as text messages from the upgrade until the socket closes.
///
/// Requests are answered concurrently (a slow call does not hold up the next), at most `maximumRequestsInFlight` at
/// a time; every message goes out as one whole frame, so answers and notifications never interleave mid-message.
/// Binary messages are read as UTF-8 JSON text too, as a lenient client might send them; pings are answered with
/// pongs; a close frame is answered with a close frame carrying the same code.
///
/// Notifications flow from the upgrade when `NotificationGate` opened them there, else from the first answer to a
/// call that carried the secret; none sent before that are delivered. When they end (the daemon stops, or the client
/// fell too far behind: `NotificationHub`), the socket is closed with 1001, so that no client misses one unawares.
struct WebSocketConnection {
    /// How many requests from one socket may await the endpoint at once before reading pauses.
    static let maximumRequestsInFlight = 16

    let endpoint: any RPCEndpoint
    /// Called once when a socket that was not sent notifications from the start shows the secret: it is then
    /// trusted, no longer one that waits.
    let trusted: @Sendable () -> Void

    /// Serves until the client closes the socket, breaks the protocol, or the task is cancelled. Unless the client
    /// closed first it is sent a close frame: 1001 (going away) on a stop, 1009 (message too big) for a message over
    /// the limit, 1002 for broken fragmentation. The channel is closed on return and the notifications are dropped.
    func serve(_ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, notificationsOpen: Bool) async throws {
        // Subscribed before anything is read, so that nothing published after the upgrade is missed.
        let notifications = notificationsOpen ? endpoint.notifications() : nil
        let (secretShown, showSecret) = AsyncStream<Void>.makeStream()
        try await channel.executeThenClose { inbound, outbound in
            // The close frame still owed to the client; nil once its own close has been answered.
            let closeCode: WebSocketErrorCode?
            do {
                let clientClosed = try await withThrowingTaskGroup(of: Void.self) { forwarding in
                    forwarding.addTask {
                        let stream: AsyncStream<[UInt8]>
                        if let notifications {
                            stream = notifications
                        } else {
                            var shown = false
                            for await _ in secretShown {
                                shown = true
                                break
                            }
                            guard shown else { return }
                            stream = endpoint.notifications()
                            trusted()
                        }
                        for await notification in stream {
                            try await outbound.write(Self.textFrame(notification))
                        }
                        // The notifications ended without this socket ending: the daemon stops, or the client fell
                        // too far behind to be sent them all. Either way it goes, and knows it missed some.
                        guard !Task.isCancelled else { return }
                        try? await outbound.write(Self.closeFrame(code: .goingAway))
                        channel.channel.close(promise: nil)
                    }
                    defer {
                        forwarding.cancelAll()
                        showSecret.finish()
                    }
                    return try await answerRequests(inbound, outbound: outbound, showSecret: showSecret)
                }
                closeCode = clientClosed ? nil : .goingAway
            } catch let error as NIOWebSocketFrameAggregator.Error {
                closeCode = error == .accumulatedFrameSizeIsTooLarge ? .messageTooLarge : .protocolError
            } catch {
                // Cancelled by a stop, or the client went away, or broke the framing (NIO has then sent its close).
                closeCode = .goingAway
            }
            if let closeCode {
                // Through the channel: the writer refuses writes from a cancelled task. Fails harmlessly if the client
                // is already gone.
                try? await channel.channel.writeAndFlush(Self.closeFrame(code: closeCode)).get()
            }
        }
    }

    /// Reads frames and answers them until the client's close frame (true: it has been answered) or the end of the
    /// stream (false), or throws when the stream fails or the task is cancelled; in-flight requests are cancelled and
    /// awaited before returning.
    private func answerRequests(
        _ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>,
        outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>,
        showSecret: AsyncStream<Void>.Continuation
    ) async throws -> Bool {
        try await withThrowingTaskGroup(of: Void.self) { requests in
            defer { requests.cancelAll() }
            var inFlight = 0
            for try await frame in inbound {
                switch frame.opcode {
                case .text, .binary:
                    if inFlight >= Self.maximumRequestsInFlight {
                        try await requests.next()
                        inFlight -= 1
                    }
                    let request = Array(frame.unmaskedData.readableBytesView)
                    inFlight += 1
                    requests.addTask {
                        let response = await endpoint.respond(to: request)
                        guard let body = response.body, !Task.isCancelled else { return }
                        try await outbound.write(Self.textFrame(body))
                        if response.showedSecret { showSecret.yield() }
                    }
                case .ping:
                    try await outbound.write(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData))
                case .connectionClose:
                    requests.cancelAll()
                    var payload = frame.unmaskedData
                    let code = payload.readWebSocketErrorCode()
                    try await outbound.write(Self.closeFrame(code: code ?? .normalClosure))
                    return true
                default:
                    // Pongs need nothing; continuations never arrive here (the aggregator joins them).
                    continue
                }
            }
            return false
        }
    }

    private static func textFrame(_ text: [UInt8]) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: text))
    }

    private static func closeFrame(code: WebSocketErrorCode) -> WebSocketFrame {
        var data = ByteBuffer()
        data.write(webSocketErrorCode: code)
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
    }
}
