/// The events of one request: its response head, its bytes, its end, and what its end means for the source,
/// the segment and the download.
extension TransferMachine {
    /// The response head arrived (with the first body byte, or at the end of a response without one). A head
    /// that does not fit the request or the file stops the attempt before any of its bytes is written.
    /// `setupSeconds` of the attempt went to connecting before the request was sent: the server's time to the
    /// first byte is the rest. `wallClock` is when the head arrived in seconds since 1970, as the executor read it
    /// (`now` is monotonic): a `Retry-After` date counts from it. `waited`, when given, is the server's time to the
    /// first byte as the executor measured it: a response adopted from the probe was asked for before its attempt
    /// began, and counting from the attempt would take a far server for one that answers at once.
    mutating func responseHead(
        slot: Int,
        headers: ResponseHeaders,
        now: Double,
        wallClock: Double,
        setupSeconds: Double = 0,
        waited: Double? = nil
    ) -> [Action] {
        guard case var .busy(attempt) = slots[slot], !attempt.accepted, attempt.verdict == nil else { return [] }
        attempt.status = headers.status
        attempt.multiplexed = headers.isMultiplexed
        if isOrigin(attempt.source) {
            attempt.verdict = ResponseCheck.verdict(
                status: headers.status,
                headers: headers,
                request: attempt.request.requested,
                resource: sources[attempt.source].resource,
                ranged: attempt.request.ranged,
                wallClock: wallClock
            )
        } else {
            attempt.verdict = ResponseCheck.peerVerdict(
                status: headers.status, headers: headers, request: attempt.request.requested, origin: resource,
                wallClock: wallClock)
        }
        attempt.accepted = attempt.verdict == nil
        if attempt.accepted {
            attempt.contentDigest = contentDigest(of: attempt, headers: headers)
            if isOrigin(attempt.source), attempt.request.ranged, attempt.request.asked == nil {
                attempt.servedEnd = ResponseCheck.servedEnd(headers: headers, request: attempt.request.requested)
            }
        }
        slots[slot] = .busy(attempt)
        guard attempt.accepted else { return [.abort(slot: slot)] }
        answered[slot] = true
        if attempt.generation == sources[attempt.source].generation {
            sources[attempt.source].answeredSinceRenewal = true
        }
        if firstByteAt == nil { firstByteAt = now }
        let firstByte = waited ?? max(0, now - attempt.startedAt - setupSeconds)
        policy?.firstByte(after: firstByte)
        sizer?.firstByte(after: firstByte)
        return []
    }

    /// Body bytes arrived for `slot` (they may still sit in its buffer).
    mutating func bytesReceived(slot: Int, count: Int) {
        guard case let .busy(attempt) = slots[slot] else { return }
        scheduler.received(segment: attempt.segment, bytes: Int64(count))
        receivedTotal += Int64(count)
        if !isOrigin(attempt.source) { receivedFromPeers += Int64(count) }
    }

    /// Bytes of `slot`'s response reached the file; they are confirmed once its transfer ends.
    mutating func bytesWritten(slot: Int, count: Int) {
        guard case let .busy(attempt) = slots[slot] else { return }
        scheduler.flushed(segment: attempt.segment, bytes: Int64(count))
    }

    /// The response went on past the end of its segment. Past a segment that another connection cut short (or
    /// past the end of a single stream's plan), the attempt is simply done; past the range the server itself
    /// announced, it broke its word, and what it wrote is thrown away before anything confirmed it.
    mutating func overran(slot: Int) -> [Action] {
        guard case var .busy(attempt) = slots[slot], attempt.verdict == nil else { return [] }
        let segment = scheduler.segments[attempt.segment]
        if segment.end < attempt.request.requested.upperBound || !attempt.request.ranged {
            attempt.verdict = .reachedEnd
            if drains(attempt, past: segment) {
                slots[slot] = .busy(attempt)
                return rewindHashing(of: attempt)
            }
        } else {
            attempt.verdict = .failure(
                .transient(
                    .protocolViolation,
                    "the server sent more bytes than the range it announced",
                    retryAfter: nil,
                    refusedConnection: false
                )
            )
            discardBytes(of: attempt)
        }
        slots[slot] = .busy(attempt)
        return [.abort(slot: slot)] + rewindHashing(of: attempt)
    }

    /// Whether `attempt`, cut short at `segment`'s end by a steal, reads the rest of its response and drops it
    /// rather than being ended there: when its connection is HTTP/1.x, which an early end closes (the next request
    /// then opens another: a handshake, and one more connection than the caps counted on, as a list's server
    /// sees it), and the rest would come within `drainSeconds` at the rate the attempt has received so far.
    /// Over HTTP/2 the stream alone ends; a slow response is ended too, since its connection would stay busy with
    /// bytes no one wants for longer than a new one takes. So is a connection the count no longer wants, whose rest
    /// waits for the others (`endSurplus`) where a thief's is fetched or done: it is to close, not to idle. So is
    /// a response asked for beyond its request's range (`TransferRequest.asked`): the probe's open-ended one,
    /// adopted as the first request, whose rest is the rest of the file, fetched by the other connections.
    private func drains(_ attempt: Attempt, past segment: SegmentScheduler.Segment) -> Bool {
        guard attempt.request.ranged, attempt.request.asked == nil, !attempt.multiplexed, attempt.accepted,
            let position = scheduler.order.firstIndex(of: attempt.segment), position + 1 < scheduler.order.count
        else { return false }
        if case .waiting = scheduler.segments[scheduler.order[position + 1]].state { return false }
        let rest = attempt.request.requested.upperBound - segment.end
        let received = segment.start + segment.received - attempt.request.range.lowerBound
        let elapsed = now - attempt.startedAt
        guard rest > 0, received > 0, elapsed > 0 else { return false }
        return Double(rest) <= Double(received) / elapsed * Self.drainSeconds
    }

    /// How long the rest of a response cut short may take to arrive for its connection to be kept rather than
    /// closed (`drains(_:past:)`). The thief fetches the same bytes, after a first byte of its own: a connection
    /// about as fast as the thief's ends its rest no later, and the download's end waits for neither. One whose
    /// rest would take longer is the slow one the steal was for, and is ended. On loopback with both cores busy,
    /// 16 connections receive a 1 MiB rest in 20 to 35 ms.
    static let drainSeconds = 0.05

    /// Throws away what `attempt` wrote: nothing confirmed it, and it will be fetched again. A sync in flight
    /// credits the segment with no more than what is kept.
    mutating func discardBytes(of attempt: Attempt) {
        scheduler.discardAttempt(segment: attempt.segment)
        let kept = scheduler.segments[attempt.segment].flushed
        if let marks = syncMarks, attempt.segment < marks.count {
            syncMarks?[attempt.segment] = min(marks[attempt.segment], kept)
        }
    }

    /// A digest that read ahead forgets what it read of a thrown-away `attempt`'s bytes.
    mutating func rewindHashing(of attempt: Attempt) -> [Action] {
        let segment = scheduler.segments[attempt.segment]
        let kept = segment.start + segment.flushed
        guard configuration.hashesAhead, hashedAheadUpTo > kept else { return [] }
        hashedAheadUpTo = kept
        return [.rewind(to: kept)]
    }

    /// Writing `slot`'s bytes to the file failed: retrying cannot help.
    mutating func writeFailed(slot: Int, error: BraidError) -> [Action] {
        guard case var .busy(attempt) = slots[slot], attempt.verdict == nil else { return [] }
        attempt.verdict = .failure(.fatal(error.code, error.message))
        attempt.writeError = error
        slots[slot] = .busy(attempt)
        return [.abort(slot: slot)]
    }

    /// The transfer on `slot` ended: its bytes are confirmed (unless they were thrown away), and the segment is
    /// complete, retried after a backoff, or the download ends.
    mutating func transferEnded(slot: Int, result: TransferResult, now: Double) -> [Action] {
        guard case let .busy(attempt) = slots[slot] else {
            preconditionFailure("Invalid state: slot \(slot) ended while idle")
        }
        self.now = now
        slots[slot] = .idle
        sources[attempt.source].activeConnections -= 1
        var actions: [Action] =
            configuration.sharesConnections ? [.releaseConnection(source: attempt.heldSource)] : []
        // Bytes a digest is to vouch for are confirmed only once checked; a response of which the digest cannot be
        // checked (it was cut short) leaves nothing behind.
        let checks = digestChecks(of: attempt, result: result)
        let confirms = configuration.pieceHashes == nil && attempt.contentDigest == nil
        recordWritten(by: attempt)
        guard case .running = state else {
            // Ending: what the attempt wrote was accepted, so it stays; nothing is retried.
            _ = scheduler.ended(segment: attempt.segment, failure: nil, now: now, random: 0, confirms: confirms)
            return actions + confirmPrefix() + finishIfIdle()
        }
        if let peerEnded = peerAttemptEnded(attempt, result: result, now: now) {
            return actions + confirmPrefix() + peerEnded + proceed()
        }
        if let renewal = renewal(after: attempt, now: now) {
            let confirmed = confirmPrefix()
            return actions + confirmed + renewal + proceed()
        }
        if servedAll(of: attempt, result: result) {
            // The server sent what it said it would, short of the segment's end: the rest is asked for next, with
            // no failure counted and no wait.
            scheduler.requeue(segment: attempt.segment, now: now, confirms: confirms)
            return actions + confirmPrefix() + proceed()
        }
        var ending: Outcome?
        var failure = failure(of: attempt, result: result, ending: &ending, actions: &actions)
        failure = account(failure, on: attempt.source, actions: &actions)
        let decision = scheduler.ended(
            segment: attempt.segment, failure: failure, now: now, random: jitter.nextUnit(), confirms: confirms)
        if case .transient(_, _, _, refusedConnection: true)? = failure, policy != nil {
            // The server turns connections away: the adaptive count drops to the ones it accepts, for a while.
            _ = policy?.refused(now: now, accepted: scheduler.activeCount)
            scheduler.setConnectionLimit(policy?.target ?? 1)
        }
        actions += confirmPrefix()
        switch decision {
        case .completed:
            let segment = scheduler.segments[attempt.segment]
            if configuration.writesBackSegments { actions.append(.writeBack(segment.start..<segment.end)) }
        case .verifying:
            actions.append(.verify(segment: attempt.segment, checks: checks ?? pieceChecks(of: attempt.segment)))
        case let .retry(delay) where ending == nil:
            retries += 1
            actions.append(.retry(reason: failure?.message ?? "the response ended early", delay: delay))
        case .retry:
            break
        case let .fail(code, message):
            ending = ending ?? .failed(Self.error(code, message, of: attempt, result: result))
        }
        if let ending { actions += end(with: ending) }
        return actions + proceed()
    }

    /// Whether `attempt` ended cleanly having written every byte of a response the server cut short by its own
    /// word (`Attempt.servedEnd`), before its segment's end.
    private func servedAll(of attempt: Attempt, result: TransferResult) -> Bool {
        guard result == .finished, attempt.accepted, attempt.verdict == nil, attempt.contentDigest == nil,
            let servedEnd = attempt.servedEnd
        else { return false }
        let segment = scheduler.segments[attempt.segment]
        return segment.flushed < segment.length && segment.start + segment.flushed >= servedEnd
    }

    /// The error a failed attempt ends the download with; a failure below HTTP keeps its cause, and says what would
    /// help.
    private static func error(
        _ code: BraidError.Code,
        _ message: String,
        of attempt: Attempt,
        result: TransferResult
    ) -> BraidError {
        // The file could not be written: that error, with its errno, is the one to report.
        if let writeError = attempt.writeError { return writeError }
        let status = attempt.status == 0 ? nil : attempt.status
        guard attempt.verdict == nil, case let .failed(failure) = result else {
            return BraidError(code, message, httpStatus: status)
        }
        return BraidError(
            code,
            message,
            httpStatus: status,
            remedies: FailureKind.remedies(for: failure.kind),
            cause: failure.cause
        )
    }

    /// What went wrong with an attempt, or nil if nothing did; a response that is not the file any more ends the
    /// download unless another source can take over.
    private mutating func failure(
        of attempt: Attempt,
        result: TransferResult,
        ending: inout Outcome?,
        actions: inout [Action]
    ) -> FailureKind? {
        switch attempt.verdict {
        case .reachedEnd:
            return nil
        case let .failure(kind):
            return kind
        case let .remoteChanged(message):
            return dropOrEnd(
                attempt.source, because: message, otherwise: .remoteChanged(message), ending: &ending, actions: &actions
            )
        case .rangesIgnored:
            return dropOrEnd(
                attempt.source, because: "it ignores byte ranges", otherwise: .rangesIgnored, ending: &ending,
                actions: &actions)
        case let .lengthDisagrees(message):
            return dropOrEnd(
                attempt.source, because: message, otherwise: .lengthDisagrees(message), ending: &ending,
                actions: &actions)
        case nil:
            switch result {
            case let .failed(failure):
                return FailureKind.classify(failure)
            case .finished where !attempt.request.ranged && resource.length == nil:
                // A stream of unknown length ends where its bytes do.
                scheduler.endUnknownLength(segment: attempt.segment)
                return nil
            case .finished, .aborted:
                return nil
            }
        }
    }

    /// Tracks a source's health. While another source is alive, one that fails fatally or too often is dropped
    /// and the segment retried elsewhere; the last source's failures count as they are.
    private mutating func account(
        _ failure: FailureKind?,
        on source: Int,
        actions: inout [Action]
    ) -> FailureKind? {
        guard let failure else {
            sources[source].failures = 0
            return nil
        }
        sources[source].failures += 1
        var fatal = false
        if case .fatal = failure { fatal = true }
        guard fatal || sources[source].failures >= Source.maximumFailures, sources[source].alive,
            sources.indices.contains(where: { $0 != source && isOrigin($0) && sources[$0].alive })
        else { return failure }
        actions.append(drop(source, because: failure.message))
        return Self.elsewhere
    }

    /// A source serves something else than the file: drop it if another is alive, else end with `outcome`.
    private mutating func dropOrEnd(
        _ source: Int,
        because reason: String,
        otherwise outcome: Outcome,
        ending: inout Outcome?,
        actions: inout [Action]
    ) -> FailureKind? {
        guard sources.indices.contains(where: { $0 != source && isOrigin($0) && sources[$0].alive }) else {
            ending = outcome
            return nil
        }
        if sources[source].alive { actions.append(drop(source, because: reason)) }
        return Self.elsewhere
    }

    mutating func drop(_ source: Int, because reason: String) -> Action {
        sources[source].alive = false
        return .notice("dropping \(sources[source].resource.requestedURL): \(reason)")
    }

    private static let elsewhere = FailureKind.transient(
        .network, "retrying on another mirror", retryAfter: 0, refusedConnection: false)
}
