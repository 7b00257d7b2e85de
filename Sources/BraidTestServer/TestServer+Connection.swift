import Foundation

extension TestServer {
    /// Reads requests from `connection` and answers them until either side closes it.
    func serve(_ connection: Socket, number: Int, peer: String) {
        var noDelay: Int32 = 1
        // Heads, chunk frames and paced slices are small writes; Nagle would hold them back behind delayed ACKs.
        _ = setsockopt(
            connection.descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        var buffer: [UInt8] = []
        while true {
            switch HTTPRequestHead.take(from: &buffer) {
            case .incomplete:
                guard connection.receive(appendingTo: &buffer) else { return }
            case .malformed:
                var plan = ResponsePlan(status: 400)
                plan.add("Content-Length", "0")
                plan.closeConnection = true
                _ = connection.send(plan.head)
                return
            case .complete(let request):
                guard answer(request, on: connection, number: number, peer: peer) else { return }
            }
        }
    }

    /// Answers one request and logs it; `true` when the connection can carry another request.
    private func answer(_ request: HTTPRequestHead, on connection: Socket, number: Int, peer: String) -> Bool {
        responses.enter()
        defer { responses.leave() }
        let received = Date()
        let path = request.path
        let (route, requestNumber, inFlight, port) = lock.withLock {
            let requestNumber = state.requestCounts[path, default: 0] + 1
            state.requestCounts[path] = requestNumber
            let inFlight = state.requestsInFlight[path, default: [:]][peer, default: 0] + 1
            state.requestsInFlight[path, default: [:]][peer] = inFlight
            return (state.routes[path], requestNumber, inFlight, state.port ?? 0)
        }
        defer {
            lock.withLock { state.requestsInFlight[path, default: [:]][peer, default: 1] -= 1 }
        }
        let context = RequestContext(
            requestNumber: requestNumber,
            connectionNumber: number,
            requestsInFlightFromClient: inFlight,
            port: port,
            digest: { self.digest(of: $0, $1) },
            rangeDigest: { self.digest(of: $0, range: $1, $2) },
            claimCorruption: { range in
                self.lock.withLock { self.state.corruptionsServed[path, default: []].insert(range).inserted }
            }
        )
        let plan = ResponsePlan(answering: request, route: route, context: context)
        var bodyBytesSent: UInt64 = 0
        var firstByteSent: Date?
        let reusable = perform(
            plan, for: path, on: connection, firstByteSent: &firstByteSent, bodyBytesSent: &bodyBytesSent)
        let record = RequestRecord(
            method: request.method,
            target: request.target,
            host: request.header("Host"),
            range: request.header("Range"),
            ifRange: request.header("If-Range"),
            ifModifiedSince: request.header("If-Modified-Since"),
            authorization: request.header("Authorization"),
            cookie: request.header("Cookie"),
            userAgent: request.header("User-Agent"),
            headerNames: Set(request.headers.map { $0.name.lowercased() }),
            status: plan.status,
            bodyBytesSent: bodyBytesSent,
            connection: number,
            received: received,
            firstByteSent: firstByteSent,
            finished: Date()
        )
        logResponse(record)
        return reusable
    }

    /// Sends what `plan` describes for the route at `path`; `true` when the connection is still usable for another
    /// request. `firstByteSent` is when the head went to the kernel, after any latency.
    private func perform(
        _ plan: ResponsePlan, for path: String, on connection: Socket, firstByteSent: inout Date?,
        bodyBytesSent: inout UInt64
    ) -> Bool {
        if plan.latency > .zero && connection.waitForHangup(timeout: plan.latency) {
            return false
        }
        firstByteSent = Date()
        guard connection.send(plan.head) else { return false }
        if let document = plan.documentBody {
            guard connection.send(document) else { return false }
            bodyBytesSent = UInt64(document.count)
        }
        if let body = plan.body {
            guard send(body, for: path, on: connection, bodyBytesSent: &bodyBytesSent) else { return false }
        }
        return !plan.closeConnection
    }

    /// Sends `body` of the route at `path`, paced when it has a rate of its own or one shared by the route; `true`
    /// when it ended normally.
    private func send(
        _ body: ResponseBody, for path: String, on connection: Socket, bodyBytesSent: inout UInt64
    ) -> Bool {
        let bufferSize = 64 * 1024
        // Slices of about 1/20 s keep a paced stream smooth without a syscall per byte.
        let slowest = [body.bytesPerSecond, body.routeBytesPerSecond].compactMap { $0 }.min()
        let sliceSize = slowest.map { min(bufferSize, max(1, $0 / 20)) } ?? bufferSize
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 8)
        defer { buffer.deallocate() }
        let start = ContinuousClock.now
        while bodyBytesSent < body.length {
            let count = Int(min(UInt64(sliceSize), body.length - bodyBytesSent))
            if let rate = body.routeBytesPerSecond {
                let turn = reserveRouteSlice(of: path, bytes: count, bytesPerSecond: rate)
                if connection.waitForHangup(timeout: ContinuousClock.now.duration(to: turn)) {
                    return false
                }
            }
            let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
            body.source.fill(slice, from: body.offset + bodyBytesSent)
            for range in body.corrupted {
                Self.corrupt(slice, at: body.offset + bodyBytesSent, within: range)
            }
            if body.chunked {
                guard connection.send(Array((String(count, radix: 16) + "\r\n").utf8)) else { return false }
            }
            guard connection.send(UnsafeRawBufferPointer(slice)) else { return false }
            if body.chunked {
                guard connection.send(Array("\r\n".utf8)) else { return false }
            }
            bodyBytesSent += UInt64(count)
            lock.withLock { state.totalBodyBytesSent += UInt64(count) }
            if let rate = body.bytesPerSecond {
                let due = start + .seconds(Double(bodyBytesSent) / Double(rate))
                if connection.waitForHangup(timeout: ContinuousClock.now.duration(to: due)) {
                    return false
                }
            }
        }
        switch body.ending {
        case .complete:
            return body.chunked ? connection.send(Array("0\r\n\r\n".utf8)) : true
        case .stall:
            _ = connection.waitForHangup(timeout: nil)
            return false
        case .close:
            return false
        }
    }

    /// Alters (XOR 0xFF) the bytes of `slice`, which holds the source's bytes from `offset`, that fall in `range`.
    private static func corrupt(_ slice: UnsafeMutableRawBufferPointer, at offset: UInt64, within range: Range<UInt64>)
    {
        let carried = offset..<offset + UInt64(slice.count)
        guard carried.overlaps(range) else { return }
        let overlap = carried.clamped(to: range)
        for position in overlap {
            slice[Int(position - offset)] ^= 0xFF
        }
    }

    /// Reserves the next `count` bytes of the rate the route at `path` shares, and returns when they may be sent.
    ///
    /// Slices are reserved back to back, so the route's responses together never run ahead of the rate by more
    /// than a slice; each response holds one reservation at a time, so they take turns. A response woken a little
    /// late keeps its place (up to ``routeRateSlack``) rather than losing the time.
    private func reserveRouteSlice(of path: String, bytes count: Int, bytesPerSecond rate: Int)
        -> ContinuousClock.Instant
    {
        lock.withLock {
            let earliest = ContinuousClock.now - Self.routeRateSlack
            let turn = max(state.routeRateFreeAt[path] ?? earliest, earliest)
            state.routeRateFreeAt[path] = turn + .seconds(Double(count) / Double(rate))
            return turn
        }
    }

    /// How far behind the clock a route's shared rate may fall and still be caught up: a short burst after an
    /// idle spell, in exchange for not losing the millisecond of each wake-up that `poll` rounds up.
    static let routeRateSlack = Duration.milliseconds(20)

    /// The digest of `range` of `content`, computed once per server.
    private func digest(
        of content: TestContent, range: Range<UInt64>, _ algorithm: TestContent.DigestAlgorithm
    ) -> [UInt8] {
        let key = State.RangeDigestKey(content: content, range: range, algorithm: algorithm)
        if let cached = lock.withLock({ state.rangeDigests[key] }) {
            return cached
        }
        let digest = content.digest(algorithm, of: range)
        lock.withLock { state.rangeDigests[key] = digest }
        return digest
    }

    /// The digest of `content`, computed once per server.
    private func digest(of content: TestContent, _ algorithm: TestContent.DigestAlgorithm) -> [UInt8] {
        if let cached = lock.withLock({ state.digests[content]?[algorithm] }) {
            return cached
        }
        let digest = content.digest(algorithm)
        lock.withLock { state.digests[content, default: [:]][algorithm] = digest }
        return digest
    }
}
