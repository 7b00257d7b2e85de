/// Checking pieces against digests: a Metalink's piece hashes, or each `206` response's `Content-Digest`. A
/// segment whose bytes are all written waits in `verifying` while its pieces are hashed; a piece that does not
/// match is fetched again on its own, from another source when there is one, and counts as a retry.
extension TransferMachine {
    /// The checks of every piece of `segment` not yet verified.
    func pieceChecks(of index: Int) -> [PieceCheck] {
        guard let pieceHashes = configuration.pieceHashes else { return [] }
        let segment = scheduler.segments[index]
        return pieceHashes.checks(
            within: (segment.start + segment.confirmed)..<segment.end, totalLength: scheduler.totalLength)
    }

    /// The digest a `206` response carries for its content, when the transfer checks them; from then on the
    /// source's responses are not cut short, and checkpoints record what was verified. None for a response that
    /// carries more than its request keeps (the probe's, adopted and cut): its digest is of bytes not all kept.
    mutating func contentDigest(of attempt: Attempt, headers: ResponseHeaders) -> ExpectedDigest? {
        // A cache peer's digest is only its own word: its bytes are held to the origin's digests instead.
        guard configuration.checksContentDigests, configuration.pieceHashes == nil, attempt.request.ranged,
            attempt.request.asked == nil, isOrigin(attempt.source),
            headers.status == 206, let value = headers["content-digest"],
            let digest = DigestHeaders.preferred(DigestHeaders.parseContentDigest(value))
        else { return nil }
        sources[attempt.source].servesContentDigests = true
        scheduler.pin(segment: attempt.segment)
        scheduler.recordsVerified = true
        return digest
    }

    /// The check of an attempt's response by its `Content-Digest`, when it has one and was received whole; one
    /// that was not has its bytes thrown away, since nothing can vouch for them. Nil when the attempt has none.
    mutating func digestChecks(of attempt: Attempt, result: TransferResult) -> [PieceCheck]? {
        guard let digest = attempt.contentDigest else { return nil }
        let segment = scheduler.segments[attempt.segment]
        let range = attempt.request.range
        if result == .finished, attempt.verdict == nil, segment.end == range.upperBound,
            segment.start + segment.flushed == range.upperBound
        {
            return [PieceCheck(range: range, algorithm: digest.algorithm, digest: digest.bytes)]
        }
        discardBytes(of: attempt)
        return nil
    }

    /// The checks of `segment`'s pieces are done: it is complete, or its bad pieces are fetched again, or after
    /// repeated mismatches the download fails naming them.
    mutating func piecesVerified(segment index: Int, bad: [Range<Int64>], now: Double) -> [Action] {
        guard case .running = state, scheduler.segments[index].state == .verifying else { return [] }
        self.now = now
        let source = lastSource[index]
        let (decision, refetch) = scheduler.verified(segment: index, bad: bad, now: now, random: jitter.nextUnit())
        var actions: [Action] = []
        if !bad.isEmpty, let source { actions += peerServedBadBytes(source: source, ranges: bad) }
        switch decision {
        case .completed:
            let segment = scheduler.segments[index]
            if configuration.writesBackSegments { actions.append(.writeBack(segment.start..<segment.end)) }
        case let .retry(delay):
            for piece in refetch { avoidedSource[piece] = source }
            retries += 1
            let ranges = bad.map { "\($0.lowerBound)-\($0.upperBound - 1)" }.joined(separator: ", ")
            let from = source.map { " from \(sourceName($0))" } ?? ""
            actions.append(
                .retry(reason: "bytes \(ranges)\(from) did not match their digest; fetching them again", delay: delay))
        case let .fail(code, message):
            let from = source.map { " (last from \(sourceName($0)))" } ?? ""
            actions += confirmPrefix()
            return actions + end(with: .failed(BraidError(code, message + from)))
        case .verifying:
            preconditionFailure("Invalid state: a verified segment is verifying again")
        }
        return actions + confirmPrefix() + proceed()
    }
}
