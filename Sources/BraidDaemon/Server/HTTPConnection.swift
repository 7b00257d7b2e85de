import NIOCore
import NIOHTTP1

/// Serves one plain HTTP/1.1 connection: reads a request, answers it, and goes on while the client keeps it alive.
///
/// Requests are answered one at a time in the order they came, which is what makes pipelining safe: NIO's pipeline
/// handler holds a pipelined request back until the previous response has ended. Each answer is written on the
/// channel and awaited until written (`HTTPReply.send`), so a close that follows never cuts it short.
struct HTTPConnection {
    /// What happens to the connection after an exchange.
    private enum Next {
        case keepOpen
        case close
    }

    let endpoint: any RPCEndpoint
    let page: [UInt8]
    let maximumBodyBytes: Int
    let policy: OriginPolicy
    /// What the bodies of all connections may hold at once.
    let budget: BodyBudget

    /// Serves until the client closes, asks to close, sends something that forces a close, or the task is
    /// cancelled; the channel is closed on return.
    func serve(_ channel: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async throws {
        try await channel.executeThenClose { inbound, _ in
            var parts = inbound.makeAsyncIterator()
            while let part = try await parts.next() {
                // A body or end without a head can only follow a request already answered early; skip it.
                guard case .head(let head) = part else { continue }
                let next = try await exchange(head, parts: &parts, channel: channel.channel)
                guard case .keepOpen = next, head.isKeepAlive else { return }
            }
        }
    }

    private func exchange(
        _ head: HTTPRequestHead,
        parts: inout NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator,
        channel: any Channel
    ) async throws -> Next {
        let declaredLength = head.headers.first(name: "content-length").flatMap { Int($0) }
        guard RequestBody.admits(declaredLength: declaredLength, limit: maximumBodyBytes) else {
            return try await refuseBody(head, parts: &parts, channel: channel)
        }
        // A body of unknown length may be as long as the limit.
        let isChunked = head.headers[canonicalForm: "transfer-encoding"].contains { $0.lowercased() == "chunked" }
        let held = try await budget.acquire(isChunked ? maximumBodyBytes : declaredLength ?? 0)
        defer { budget.release(held) }
        if head.headers[canonicalForm: "expect"].contains(where: { $0.lowercased() == "100-continue" }) {
            let interim = HTTPServerResponsePart.head(HTTPResponseHead(version: head.version, status: .continue))
            try await channel.writeAndFlush(interim).get()
        }
        var body = RequestBody(limit: maximumBodyBytes, declaredLength: declaredLength)
        reading: while let part = try await parts.next() {
            switch part {
            case .body(let chunk):
                if body.append(chunk) == .tooLarge {
                    return try await refuseBody(head, parts: &parts, channel: channel)
                }
            case .end:
                break reading
            case .head:
                // The decoder never yields a head before the previous request's end.
                return .close
            }
        }
        let route = HTTPRoute(method: head.method, target: head.uri)
        let reply =
            route.isRPC && !policy.admits(head.headers)
            ? HTTPReply.forbiddenOrigin() : await reply(to: route, body: body.bytes)
        try await reply.send(on: channel, version: head.version, keepAlive: head.isKeepAlive)
        return reply.closesConnection ? .close : .keepOpen
    }

    private func reply(to route: HTTPRoute, body: [UInt8]) async -> HTTPReply {
        switch route {
        case .page:
            return .page(page)
        case .rpcPost:
            return .rpc(await endpoint.respond(to: body).body)
        case .rpcGet(let query):
            do throws(JSONRPCGetForm.Failure) {
                let form = try JSONRPCGetForm(query: query)
                if form.callback != nil, !policy.admitsJSONP { return .forbiddenOrigin() }
                return .rpc(await endpoint.respond(to: form.body).body, callback: form.callback)
            } catch {
                return .rpcError(code: error.code, message: error.message)
            }
        case .rpcPreflight:
            return .preflight()
        case .methodNotAllowed(let allow):
            return .methodNotAllowed(allow: allow)
        case .notFound:
            return .notFound()
        }
    }

    /// Answers 413, then reads and drops what the client is still sending of the body (up to a few times the
    /// limit) so that closing does not reset the connection before the client has read the answer.
    private func refuseBody(
        _ head: HTTPRequestHead,
        parts: inout NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator,
        channel: any Channel
    ) async throws -> Next {
        try await HTTPReply.payloadTooLarge(limit: maximumBodyBytes).send(
            on: channel, version: head.version, keepAlive: false)
        let enough = min(maximumBodyBytes, RequestBody.ceiling) * 4
        var dropped = 0
        while dropped <= enough, let part = try await parts.next() {
            guard case .body(let chunk) = part else { break }
            dropped += chunk.readableBytes
        }
        return .close
    }
}
